package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/examples/internal/demoredis"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The scheduler part: three replicas, each with its own Redis clients, run
// an asynqlock.Scheduler with one "@every 1s" entry; the leader's context
// is cancelled after a few ticks and another replica takes over at once.
const (
	replicas      = 3
	ticksPerTerm  = 3
	schedulerKey  = "scheduler:reports"
	schedulerType = "report:tick"
)

// replica is one Scheduler and the way to stop it.
type replica struct {
	name   string
	sched  *asynqlock.Scheduler
	cancel context.CancelFunc
	done   chan error
}

// scheduled runs the replicas, cancels the first leader once it has
// enqueued ticksPerTerm ticks, lets the next leader enqueue as many, and
// returns the number of tasks in the queue per scheduled time.
func scheduled(ctx context.Context, env *demorun.Env) (map[time.Time]int, error) {
	queue, prefix := "asynqlock-sched-"+randomHex(), demoredis.Prefix("asynqlock-scheduler")
	fmt.Fprintf(env.Out, "Keys:  %s:*\n", prefix)
	enqueued := make(chan string, 64) // the replica that enqueued each tick
	w := &syncWriter{w: env.Out}
	insp := asynq.NewInspectorFromRedisClient(env.Redis)
	defer insp.Close()
	defer insp.DeleteQueue(queue, true) // after the replicas stopped
	var reps []*replica
	defer func() {
		for _, r := range reps {
			r.stop()
		}
	}()
	for i := range replicas {
		r, err := startReplica(ctx, env.Redis, prefix, queue, fmt.Sprintf("replica-%d", i+1), w, enqueued)
		if err != nil {
			return nil, err
		}
		reps = append(reps, r)
	}
	first, err := waitTicks(ctx, enqueued, ticksPerTerm, "")
	if err != nil {
		return nil, err
	}
	for _, r := range reps {
		if r.name == first {
			fmt.Fprintf(w, "  cancelling %s's context: it hands the term over\n", first)
			r.stop()
		}
	}
	if _, err := waitTicks(ctx, enqueued, ticksPerTerm, first); err != nil {
		return nil, err
	}
	for _, r := range reps {
		r.stop()
	}
	return countTicks(insp, queue)
}

// startReplica starts a Scheduler as one replica would, on clients of its
// own; it reports the replica's name on enqueued for each tick it enqueues.
func startReplica(ctx context.Context, rdb *redis.Client, prefix, queue, name string, w io.Writer, enqueued chan<- string) (*replica, error) {
	lockRC, asynqRC := redis.NewClient(rdb.Options()), redis.NewClient(rdb.Options())
	backend, err := redisbackend.New(lockRC, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	s, err := asynqlock.NewScheduler(asynq.NewClientFromRedisClient(asynqRC), backend, schedulerKey, name,
		election.WithTTL(5*time.Second))
	if err != nil {
		return nil, err
	}
	if _, err := s.Register("@every 1s", asynq.NewTask(schedulerType, nil), asynq.Queue(queue)); err != nil {
		return nil, err
	}
	s.OnTick(func(t asynqlock.Tick) {
		switch {
		case t.Err == nil:
			how := ""
			if t.CatchUp {
				how = " (catch-up on the term's start)"
			}
			fmt.Fprintf(w, "  %s (term %s) enqueued the %s tick%s\n", name, t.Fence, t.At.Format(time.TimeOnly), how)
			enqueued <- name
		case errors.Is(t.Err, asynq.ErrTaskIDConflict):
			fmt.Fprintf(w, "  %s (term %s): the %s tick was already enqueued\n", name, t.Fence, t.At.Format(time.TimeOnly))
		default:
			fmt.Fprintf(w, "  %s: the %s tick failed: %v\n", name, t.At.Format(time.TimeOnly), t.Err)
		}
	})
	rctx, cancel := context.WithCancel(ctx)
	r := &replica{name: name, sched: s, cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- s.Run(rctx)
		_ = lockRC.Close()
		_ = asynqRC.Close()
	}()
	return r, nil
}

// stop cancels the replica's context and waits until its Run returned.
func (r *replica) stop() {
	r.cancel()
	if r.done != nil {
		<-r.done
		r.done = nil
	}
}

// waitTicks waits until n ticks were enqueued by one replica other than
// not, and returns its name.
func waitTicks(ctx context.Context, enqueued <-chan string, n int, not string) (string, error) {
	count := map[string]int{}
	timeout := time.After(15 * time.Second)
	for {
		select {
		case name := <-enqueued:
			if name == not {
				return "", fmt.Errorf("%s enqueued a tick after its context was cancelled", name)
			}
			if count[name]++; count[name] == n {
				return name, nil
			}
		case <-timeout:
			return "", fmt.Errorf("%d ticks not enqueued within 15s (got %v)", n, count)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// countTicks counts the queue's tasks per scheduled time, read from their
// task ids (asynqlock.TickID ends with it).
func countTicks(insp *asynq.Inspector, queue string) (map[time.Time]int, error) {
	tasks, err := insp.ListPendingTasks(queue, asynq.PageSize(1000))
	if err != nil {
		return nil, err
	}
	out := map[time.Time]int{}
	for _, t := range tasks {
		parts := strings.SplitN(t.ID, ":", 4) // "asynqlock", key hash, entry id, time
		at, err := time.Parse(time.RFC3339, parts[len(parts)-1])
		if err != nil {
			return nil, fmt.Errorf("task %s: %v", t.ID, err)
		}
		out[at]++
	}
	return out, nil
}

// checkTicks prints the count per scheduled time and fails unless every
// tick was enqueued once, with no tick missing between the first and the
// last.
func checkTicks(w io.Writer, counts map[time.Time]int) error {
	var times []time.Time
	for at := range counts {
		times = append(times, at)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	fmt.Fprintf(w, "Tasks in the queue per scheduled time:\n")
	var bad []string
	for i, at := range times {
		fmt.Fprintf(w, "  %s  %d\n", at.Format(time.TimeOnly), counts[at])
		if counts[at] != 1 {
			bad = append(bad, fmt.Sprintf("%s enqueued %d times", at.Format(time.TimeOnly), counts[at]))
		}
		if i > 0 && at.Sub(times[i-1]) > time.Second {
			bad = append(bad, fmt.Sprintf("no tick from %s to %s", times[i-1].Format(time.TimeOnly), at.Format(time.TimeOnly)))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	fmt.Fprintf(w, "Ticks: %d, each enqueued once, none missing\n", len(times))
	return nil
}

// randomHex returns 12 random hex digits.
func randomHex() string {
	var b [6]byte
	rand.Read(b[:]) // never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
