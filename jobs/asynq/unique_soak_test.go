package asynqlock_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/redisbackend"
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
// runs until the process is killed; in mode "soak" it counts itself in
// Redis while it runs (printing "overlap <payload>" when another run of
// the payload is counted there too), sleeps up to 200ms, fails one run in
// five, and prints "end <task id>".
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
		running := prefix + ":soak:running:" + string(t.Payload())
		if n, err := rdb.Incr(ctx, running).Result(); err == nil && n > 1 {
			say("overlap", string(t.Payload()))
		}
		defer rdb.Decr(context.WithoutCancel(ctx), running)
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
	for _, payload := range running { // the killed runs never counted themselves out
		s.e.asynqRC.Decr(context.Background(), s.e.backend.Prefix()+":soak:running:"+payload)
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
// some tasks are archived), while workers are killed and tasks deleted
// through the Inspector. No two live tasks of one key are ever queued,
// no two runs of one key overlap, and once the faults stop every key
// frees within its backstop. It runs for SYNCGUARD_UNIQUE_SOAK (make
// chaos); unset, it is skipped.
func TestUniqueSoak(t *testing.T) {
	d, _ := time.ParseDuration(os.Getenv(uniqSoakEnv))
	if d <= 0 {
		t.Skip(uniqSoakEnv + " is unset: the soak runs in make chaos")
	}
	const keys, producers, workers = 6, 4, 3
	backstop := 10 * time.Second
	e := newEnv(t)
	s := &uniqueSoak{t: t, e: e, workers: map[*exec.Cmd]*soakWorker{}, zombies: map[string]bool{}}
	for range workers {
		s.start()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	opts := []asynqlock.UniqueOption{asynqlock.UniqueLease(time.Second), asynqlock.UniqueBackstop(backstop)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for range producers {
		p := newUniqueProducer(t, e.redis.Client(t), e.backend.Prefix())
		wg.Go(func() {
			for ctx.Err() == nil {
				_, err := p.enqueue(ctx, e.queue, "key-"+strconv.Itoa(rand.N(keys)), []asynq.Option{asynq.MaxRetry(2)}, opts...)
				mu.Lock()
				outcomes[soakOutcome(ctx, err)]++
				mu.Unlock()
				time.Sleep(rand.N(20 * time.Millisecond))
			}
		})
	}
	s.faults(ctx)
	wg.Wait()
	s.drain(keys, backstop, opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%v: enqueues %v, runs %d, workers killed %d (tasks left to asynq's recovery %d)", d, outcomes, s.runs, s.kills, len(s.zombies))
	if len(s.overlaps) > 0 || outcomes["error"] > 0 {
		t.Errorf("overlapping runs %v; producer errors %d", s.overlaps, outcomes["error"])
	}
}

// soakOutcome names a producer's outcome.
func soakOutcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "enqueued"
	case errors.Is(err, asynqlock.ErrDuplicateTask):
		return "refused"
	case ctx.Err() != nil:
		return "cut by the end"
	}
	return "error"
}

// faults kills a worker or deletes a pending task every second or two,
// and checks the queue every 100ms, until ctx ends.
func (s *uniqueSoak) faults(ctx context.Context) {
	next := time.Now().Add(time.Second)
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		s.check()
		if time.Now().Before(next) {
			continue
		}
		next = time.Now().Add(time.Second + rand.N(time.Second))
		if rand.N(2) == 0 {
			s.kill()
			continue
		}
		if tasks, err := s.e.insp.ListPendingTasks(s.e.queue); err == nil && len(tasks) > 0 {
			_ = s.e.insp.DeleteTask(s.e.queue, tasks[rand.N(len(tasks))].ID)
		}
	}
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
