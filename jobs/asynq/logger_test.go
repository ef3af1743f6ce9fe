package asynqlock_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
)

// lineCounter is an asynq.Logger that counts the lines it is given, and
// those about revoked tasks.
type lineCounter struct {
	mu            sync.Mutex
	lines, revoke int
	last          []string
}

func (c *lineCounter) log(level string, args []any) {
	s := level + fmt.Sprint(args...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines++
	if strings.Contains(s, "revoke task") {
		c.revoke++
	}
	if len(c.last) < 5 {
		c.last = append(c.last, s)
	}
}

func (c *lineCounter) Debug(args ...any) { c.log("DEBUG: ", args) }
func (c *lineCounter) Info(args ...any)  { c.log("INFO: ", args) }
func (c *lineCounter) Warn(args ...any)  { c.log("WARN: ", args) }
func (c *lineCounter) Error(args ...any) { c.log("ERROR: ", args) }
func (c *lineCounter) Fatal(args ...any) { c.log("FATAL: ", args) }

func (c *lineCounter) counts() (lines, revoke int, first []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines, c.revoke, append([]string(nil), c.last...)
}

// TestLoggerQuietsDrops runs 200 copies of one task with a done TTL on a
// server logging at asynq's default level (Info) and counts the lines
// asynq writes: one "revoke task" warning per dropped duplicate with its
// own logger, none through (*Guard).Logger, while the ErrorHandler still
// sees every drop and every other line still gets through.
func TestLoggerQuietsDrops(t *testing.T) {
	t.Parallel()
	const n = 200
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("guard logger %v", quiet), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := e.guard(t, asynqlock.WithTTL(time.Second), asynqlock.WithDoneTTL(time.Minute))
			counter := &lineCounter{}
			var logger asynq.Logger = counter
			if quiet {
				logger = g.Logger(counter)
			}
			errs := &errorLog{}
			r := newRuns()
			e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
				defer r.enter(ctx)()
				time.Sleep(100 * time.Millisecond) // hold the key while others arrive
				return nil
			}, asynq.Config{
				RetryDelayFunc: asynqlock.RetryDelay(quickRetry),
				IsFailure:      asynqlock.IsFailure,
				ErrorHandler:   errs,
				Logger:         logger,
				LogLevel:       asynq.InfoLevel, // asynq's default
			})
			e.enqueue(t, "same", n, "log")
			qi := e.waitQueue(t, 30*time.Second, "all tasks handled", drained)

			lines, revoke, first := counter.counts()
			dropped := errs.count(doneDup)
			t.Logf("%d tasks: %d ran, %d dropped as done, %d requeues; asynq logged %d lines, %d of them revoke warnings",
				n, r.total.Load(), dropped, errs.count(busyDup), lines, revoke)
			if got := r.total.Load(); got != 1 {
				t.Errorf("handler runs = %d, want 1", got)
			}
			if dropped != n-1 {
				t.Errorf("ErrorHandler saw %d drops, want %d", dropped, n-1)
			}
			if qi.Archived != 0 || qi.FailedTotal != 0 {
				t.Errorf("archived %d, failed %d; want 0, 0", qi.Archived, qi.FailedTotal)
			}
			want := dropped // one warning per drop
			if quiet {
				want = 0
			}
			if revoke != want {
				t.Errorf("revoke warnings logged = %d, want %d (lines: %q)", revoke, want, first)
			}
			if lines == 0 {
				t.Error("no line logged at all; asynq's start-up lines should reach the logger")
			}
		})
	}
}

// TestLoggerKeepsOtherRevokes: a task the handler itself revokes is still
// logged through (*Guard).Logger.
func TestLoggerKeepsOtherRevokes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.guard(t)
	counter := &lineCounter{}
	errs := &errorLog{}
	e.serve(t, g, func(context.Context, *asynq.Task) error {
		return fmt.Errorf("not for us: %w", asynq.RevokeTask)
	}, asynq.Config{ErrorHandler: errs, Logger: g.Logger(counter), LogLevel: asynq.WarnLevel})
	e.enqueue(t, "x", 1, "own")
	e.waitQueue(t, 10*time.Second, "the task revoked", func(qi *asynq.QueueInfo) bool {
		return drained(qi) && len(errs.all()) == 1
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		// asynq logs the warning right after calling the ErrorHandler.
		_, revoke, first := counter.counts()
		if revoke == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoke warnings = %d, want 1 (lines: %q)", revoke, first)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDefaultKeyPerQueue: on a real server, one task in two queues takes
// two keys, and two copies in one queue take one key.
func TestDefaultKeyPerQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.queue + "-b"
	t.Cleanup(func() { _ = e.insp.DeleteQueue(other, true) })
	g := e.guard(t, asynqlock.WithTTL(time.Second)) // a requeued copy returns within a second
	var mu sync.Mutex
	keys := map[string]string{} // task id -> lease key
	e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
		l, _ := lock.LeaseFrom(ctx)
		id, _ := asynq.GetTaskID(ctx)
		mu.Lock()
		defer mu.Unlock()
		keys[id] = l.Key
		return nil
	}, asynq.Config{Queues: map[string]int{e.queue: 1, other: 1}, RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure})
	task := asynq.NewTask(taskType, []byte("same"))
	for _, id := range []string{"a-1", "a-2"} {
		if _, err := e.client.Enqueue(task, asynq.Queue(e.queue), asynq.TaskID(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.client.Enqueue(task, asynq.Queue(other), asynq.TaskID("b-1")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(keys)
		mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks run: %d, want 3", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if keys["a-1"] != keys["a-2"] {
		t.Errorf("one queue, two keys: %q and %q", keys["a-1"], keys["a-2"])
	}
	if keys["a-1"] == keys["b-1"] {
		t.Errorf("queues %s and %s share key %q", e.queue, other, keys["a-1"])
	}
	for id, q := range map[string]string{"a-1": e.queue, "b-1": other} {
		if want := asynqlock.DefaultPrefix + asynqlock.DefaultKeyIn(q, task); keys[id] != want {
			t.Errorf("task %s in queue %s: key %q, want %q", id, q, keys[id], want)
		}
	}
}
