package asynqlock_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The worker processes of the unique tests: the test binary started again
// with these variables set.
const (
	uniqAddrEnv   = "ASYNQLOCK_UNIQUE_WORKER_ADDR"
	uniqPrefixEnv = "ASYNQLOCK_UNIQUE_WORKER_PREFIX"
	uniqQueueEnv  = "ASYNQLOCK_UNIQUE_WORKER_QUEUE"
	uniqModeEnv   = "ASYNQLOCK_UNIQUE_WORKER_MODE"
	// uniqSoakEnv sets TestUniqueSoak's duration; unset, it is skipped.
	uniqSoakEnv = "SYNCGUARD_UNIQUE_SOAK"
)

// uniqueWorker, in a worker process, runs an asynq server with a Guard.
// Its handler prints "start <task id> <payload>" and, in mode "block",
// runs until the process is killed; in mode "soak" it adds itself to a
// set in Redis while it runs (printing "overlap <payload> <members>" when
// another run of the payload is there too), sleeps up to 200ms, fails one
// run in five, and prints "end <task id>".
func uniqueWorker() {
	addr := os.Getenv(uniqAddrEnv)
	if addr == "" {
		return
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	prefix := os.Getenv(uniqPrefixEnv)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		fmt.Println("redisbackend.New:", err)
		os.Exit(2)
	}
	g, err := asynqlock.New(b, asynqlock.WithTTL(time.Second))
	if err != nil {
		fmt.Println("New:", err)
		os.Exit(2)
	}
	var mu sync.Mutex // one line at a time on stdout
	say := func(a ...any) { mu.Lock(); defer mu.Unlock(); fmt.Println(a...) }
	h := func(ctx context.Context, t *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		say("start", id, string(t.Payload()))
		if os.Getenv(uniqModeEnv) == "block" {
			<-ctx.Done()
			return ctx.Err()
		}
		// A set of runs, not a counter: go-redis sends a command again
		// when its reply is lost (Redis killed after it ran), which would
		// count a run twice.
		running, member := soakRunning(prefix, string(t.Payload())), soakRun(os.Getpid(), id)
		if err := rdb.SAdd(ctx, running, member).Err(); err == nil {
			if m, err := rdb.SMembers(ctx, running).Result(); err == nil && len(m) > 1 {
				say("overlap", string(t.Payload()), strings.Join(m, ","))
			}
		}
		defer soakRemove(rdb, running, member)
		defer say("end", id)
		time.Sleep(rand.N(200 * time.Millisecond))
		if rand.N(5) == 0 {
			return errors.New("soak: a failed attempt")
		}
		return nil
	}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 4, Queues: map[string]int{os.Getenv(uniqQueueEnv): 1},
		TaskCheckInterval: 50 * time.Millisecond, DelayedTaskCheckInterval: 100 * time.Millisecond,
		IsFailure: asynqlock.IsFailure, RetryDelayFunc: asynqlock.RetryDelay(quickRetry),
		Logger: g.Logger(nil), LogLevel: asynq.ErrorLevel})
	err = srv.Run(g.Wrap(asynq.HandlerFunc(h)))
	fmt.Println("Run:", err)
	os.Exit(2)
}

// soakRunning is the set of the runs of payload; soakRun is a member.
func soakRunning(prefix, payload string) string { return prefix + ":soak:running:" + payload }
func soakRun(pid int, id string) string         { return strconv.Itoa(pid) + ":" + id }

// soakRemove removes a run from its set, trying again while Redis stalls
// or restarts (up to 10 s): a run left in the set would be seen overlap
// every later one. A run whose SADD failed is removed too: it may have
// run all the same.
func soakRemove(rdb redis.Cmdable, running, member string) {
	for range 100 {
		if rdb.SRem(context.Background(), running, member).Err() == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startUniqueWorker starts a worker process on e's queue and prefix; its
// lines come on the channel, which is closed when it exits.
func startUniqueWorker(t *testing.T, e *env, mode string) (*exec.Cmd, <-chan string) {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), uniqAddrEnv+"="+e.redis.Addr(), uniqPrefixEnv+"="+e.backend.Prefix(),
		uniqQueueEnv+"="+e.queue, uniqModeEnv+"="+mode)
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_ = c.Wait()
	}()
	t.Cleanup(func() { _ = c.Process.Kill(); <-done })
	return c, lines
}

// uniqueSoak is the state of TestUniqueSoak: the worker processes, the
// tasks each is running, and the tasks of killed workers (which asynq may
// recover and deliver again, to be dropped as superseded or run).
type uniqueSoak struct {
	t *testing.T
	e *env

	mu       sync.Mutex
	workers  map[*exec.Cmd]*soakWorker
	zombies  map[string]bool
	overlaps []string
	runs     int
	kills    int

	// The producers' calls: their outcomes by kind, the unexpected
	// errors (the first ten), an error of each kind Redis's faults
	// caused, and how far past their deadline they returned; the windows
	// of Redis's faults.
	outcomes   map[string]int
	errs       []string
	faultErrs  []string
	overruns   []time.Duration
	maxOverrun time.Duration
	windows    []*faultWindow
}

// soakWorker is what the soak knows of a worker process.
type soakWorker struct {
	running map[string]string // the payload of each task id it runs
	gone    chan struct{}     // closed once it exited and its lines were read
}

// start starts one more worker and follows its lines.
func (s *uniqueSoak) start() {
	c, lines := startUniqueWorker(s.t, s.e, "soak")
	w := &soakWorker{running: map[string]string{}, gone: make(chan struct{})}
	running := w.running
	s.mu.Lock()
	s.workers[c] = w
	s.mu.Unlock()
	go func() {
		defer close(w.gone)
		for line := range lines {
			f := strings.Fields(line)
			s.mu.Lock()
			switch {
			case f[0] == "start" && len(f) == 3:
				running[f[1]] = f[2]
				s.runs++
			case f[0] == "end" && len(f) == 2:
				delete(running, f[1])
			case f[0] == "overlap":
				s.overlaps = append(s.overlaps, line)
			}
			s.mu.Unlock()
		}
	}()
}

// kill kills a worker and starts another; the tasks it was running are
// zombies from then on.
func (s *uniqueSoak) kill() {
	s.mu.Lock()
	var victim *exec.Cmd
	var w *soakWorker
	for victim, w = range s.workers {
		break
	}
	s.mu.Unlock()
	_ = victim.Process.Kill()
	<-w.gone
	s.mu.Lock()
	running := w.running
	delete(s.workers, victim)
	for id := range running {
		s.zombies[id] = true
	}
	s.kills++
	s.mu.Unlock()
	for id, payload := range running { // the killed runs never removed themselves
		soakRemove(s.e.asynqRC, soakRunning(s.e.backend.Prefix(), payload), soakRun(victim.Process.Pid, id))
	}
	s.start()
}

// check fails the test if two waiting tasks of one key, neither a zombie,
// are in the queue. Pending is listed before retry: a task enqueued after
// another ended is listed first, so a snapshot spanning both lists never
// shows the two together unless they were.
func (s *uniqueSoak) check() {
	pending, err1 := s.e.insp.ListPendingTasks(s.e.queue, asynq.PageSize(1000))
	retry, err2 := s.e.insp.ListRetryTasks(s.e.queue, asynq.PageSize(1000))
	if err := errors.Join(err1, err2); err != nil {
		return // the queue may not exist yet
	}
	byKey := map[string]map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ti := range append(pending, retry...) {
		if s.zombies[ti.ID] {
			continue
		}
		k := string(ti.Payload)
		if byKey[k] == nil {
			byKey[k] = map[string]bool{}
		}
		byKey[k][ti.ID] = true
		if len(byKey[k]) > 1 {
			s.t.Errorf("two live tasks of key %q: %v", k, byKey[k])
		}
	}
}

// TestUniqueSoak runs producers enqueuing unique tasks over a few keys,
// and worker processes running them (some attempts fail and are retried,
// some tasks are archived), while workers are killed, tasks deleted
// through the Inspector, and Redis (AOF, fsync always) stalls for 1-2 s
// (SIGSTOP) and restarts, once gracefully and once as a crash. No two
// live tasks of one key are ever queued, no two runs of one key overlap,
// once the faults stop every key frees within its backstop, and every
// producer call ends by its context's deadline (1 s), with an error only
// during a stall or a restart and only of the kinds those return. It runs
// for SYNCGUARD_UNIQUE_SOAK (make chaos); unset, it is skipped.
func TestUniqueSoak(t *testing.T) {
	d, _ := time.ParseDuration(os.Getenv(uniqSoakEnv))
	if d <= 0 {
		t.Skip(uniqSoakEnv + " is unset: the soak runs in make chaos")
	}
	const keys, producers, workers = 6, 4, 3
	backstop := 10 * time.Second
	e := newEnvOn(t, redistest.Start(t, redistest.WithAOF()))
	s := &uniqueSoak{t: t, e: e, workers: map[*exec.Cmd]*soakWorker{}, zombies: map[string]bool{},
		outcomes: map[string]int{}}
	for range workers {
		s.start()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	opts := []asynqlock.UniqueOption{asynqlock.UniqueLease(time.Second), asynqlock.UniqueBackstop(backstop)}
	var wg sync.WaitGroup
	for range producers {
		p := newUniqueProducer(t, e.redis.Client(t), e.backend.Prefix())
		wg.Go(func() {
			for ctx.Err() == nil {
				cctx, cancel := context.WithTimeout(context.Background(), soakCallTimeout)
				start := time.Now()
				_, err := p.enqueue(cctx, e.queue, "key-"+strconv.Itoa(rand.N(keys)), []asynq.Option{asynq.MaxRetry(2)}, opts...)
				s.call(start, time.Now(), err)
				cancel()
				time.Sleep(rand.N(20 * time.Millisecond))
			}
		})
	}
	s.faults(ctx, d)
	wg.Wait()
	s.drain(keys, backstop, opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	var faults []string
	for _, w := range s.windows {
		faults = append(faults, w.kind+" "+w.end.Sub(w.start).Round(time.Millisecond).String())
	}
	t.Logf("%v: enqueues %v, runs %d, workers killed %d (tasks left to asynq's recovery %d), Redis faults %v, "+
		"longest call past its deadline %v; an error of each kind the faults caused: %q",
		d, s.outcomes, s.runs, s.kills, len(s.zombies), faults, s.maxOverrun, s.faultErrs)
	if len(s.overlaps) > 0 || len(s.errs) > 0 || len(s.overruns) > 0 {
		t.Errorf("overlapping runs %v; producer errors %d %q; calls past their deadline by more than %v: %v",
			s.overlaps, len(s.errs), s.errs, soakOverrunMargin, s.overruns)
	}
}

const (
	// soakCallTimeout is the deadline of each producer call of the soak.
	soakCallTimeout = time.Second
	// soakOverrunMargin is how far past its deadline a call may return:
	// the scheduling of a loaded machine, not a wait on Redis.
	soakOverrunMargin = 250 * time.Millisecond
	// soakFaultGrace extends a Redis fault's window for the calls that may
	// fail because of it: a call started right after a restart finds the
	// client's connections to the old process broken.
	soakFaultGrace = time.Second
)

// faultWindow is when Redis was stalled or restarting.
type faultWindow struct {
	kind       string // "stall" or "restart"
	start, end time.Time
}

// call records a producer call that ran from start to end: its outcome,
// and whether it returned past its deadline by more than the margin. An
// error is allowed only of a kind a stalled or restarting Redis returns,
// from a call that overlapped such a fault.
func (s *uniqueSoak) call(start, end time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if over := end.Sub(start) - soakCallTimeout; over > 0 {
		s.maxOverrun = max(s.maxOverrun, over)
		if over > soakOverrunMargin {
			s.overruns = append(s.overruns, over)
		}
	}
	switch {
	case err == nil:
		s.outcomes["enqueued"]++
		return
	case errors.Is(err, asynqlock.ErrDuplicateTask):
		s.outcomes["refused"]++
		return
	}
	kind := redisFaultError(err)
	for _, w := range s.windows {
		if kind != "" && !start.After(w.end.Add(soakFaultGrace)) && !end.Before(w.start) {
			k := w.kind + ": " + kind
			if s.outcomes[k]++; s.outcomes[k] == 1 {
				s.faultErrs = append(s.faultErrs, k+": "+err.Error())
			}
			return
		}
	}
	s.outcomes["error"]++
	if len(s.errs) < 10 {
		s.errs = append(s.errs, err.Error())
	}
}

// redisFaultError names the kind of err when it is one a stalled or
// restarting Redis returns, else "": the call's deadline passed (a stall),
// or the server refused or dropped the connection, or answered LOADING
// while it read its AOF (a restart).
func redisFaultError(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, syscall.ECONNREFUSED), strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF),
		strings.Contains(err.Error(), "connection reset"), strings.Contains(err.Error(), "broken pipe"),
		strings.HasSuffix(err.Error(), "EOF"):
		return "connection lost"
	case strings.Contains(err.Error(), "LOADING"):
		return "loading"
	}
	return ""
}

// drain waits, once the producers stopped, until a unique enqueue of
// every key goes in: within the backstop, whatever the faults left.
func (s *uniqueSoak) drain(keys int, backstop time.Duration, opts []asynqlock.UniqueOption) {
	deadline := time.Now().Add(backstop)
	for k := range keys {
		for {
			_, err := asynqlock.Enqueue(context.Background(), s.e.client, asynq.NewTask(taskType, []byte("key-"+strconv.Itoa(k))),
				asynqlock.TaskOptions(asynq.Queue(s.e.queue)), asynqlock.UniqueUntilDone(s.e.backend, s.e.insp, opts...))
			if err == nil {
				break
			}
			if !errors.Is(err, asynqlock.ErrDuplicateTask) || time.Now().After(deadline) {
				s.t.Errorf("key-%d: %v, %v after the faults stopped", k, err, backstop)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// faults kills a worker or deletes a pending task every second or two,
// stalls Redis for 1-2 s four times (every fifth of d) and restarts it
// twice (every third of d: first gracefully, then as a crash), and checks
// the queue every 100ms, until ctx ends.
func (s *uniqueSoak) faults(ctx context.Context, d time.Duration) {
	start := time.Now()
	next := start.Add(time.Second)
	stalls, restarts := 0, 0
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		s.check()
		if time.Now().Before(next) {
			continue
		}
		next = time.Now().Add(time.Second + rand.N(time.Second))
		switch since := time.Since(start); {
		case since >= time.Duration(stalls+1)*d/5 && stalls < 4:
			stalls++
			s.redisFault("stall", func() {
				s.e.redis.Pause(s.t)
				time.Sleep(time.Second + rand.N(time.Second))
				s.e.redis.Resume(s.t)
			})
		case since >= time.Duration(restarts+1)*d/3 && restarts < 2:
			restarts++
			s.redisFault("restart", func() {
				if restarts == 2 {
					s.e.redis.Kill(s.t) // every write it answered is on disk (fsync always)
				}
				s.e.redis.Restart(s.t)
			})
		case rand.N(2) == 0:
			s.kill()
		default:
			if tasks, err := s.e.insp.ListPendingTasks(s.e.queue); err == nil && len(tasks) > 0 {
				_ = s.e.insp.DeleteTask(s.e.queue, tasks[rand.N(len(tasks))].ID)
			}
		}
	}
}

// redisFault runs fault, a stall or a restart of Redis, and records its
// window.
func (s *uniqueSoak) redisFault(kind string, fault func()) {
	w := faultWindow{kind: kind, start: time.Now()}
	s.mu.Lock()
	w.end = w.start.Add(time.Hour) // until it ends
	s.windows = append(s.windows, &w)
	s.mu.Unlock()
	fault()
	s.mu.Lock()
	w.end = time.Now()
	s.mu.Unlock()
}
