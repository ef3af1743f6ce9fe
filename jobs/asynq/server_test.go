package asynqlock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// These tests run a real asynq.Server and asynq.Client against real Redis.
// Retry delays other than RetryDelay's are short so that retried tasks
// come back within the test.

// quickRetry is the fallback retry delay of the tests.
func quickRetry(int, error, *asynq.Task) time.Duration { return 100 * time.Millisecond }

func TestDuplicatesNeverOverlap(t *testing.T) {
	t.Parallel()
	const n = 30
	tests := []struct {
		desc  string
		opts  []asynqlock.Option
		check func(t *testing.T, runs int, errs *errorLog)
	}{
		{
			desc: "drop while busy",
			opts: []asynqlock.Option{asynqlock.WithPolicy(asynqlock.Drop)},
			check: func(t *testing.T, runs int, errs *errorLog) {
				// Every task either ran or was dropped as a busy duplicate.
				if dropped := errs.count(busyDup); runs < 1 || runs+dropped != n {
					t.Errorf("runs + dropped = %d + %d, want >= 1 run and %d in all", runs, dropped, n)
				}
			},
		},
		{
			desc: "requeue with done TTL",
			opts: []asynqlock.Option{asynqlock.WithDoneTTL(time.Minute)},
			check: func(t *testing.T, runs int, errs *errorLog) {
				if runs != 1 {
					t.Errorf("handler runs = %d, want exactly 1", runs)
				}
				if got := errs.count(doneDup); got != n-1 {
					t.Errorf("tasks dropped as done = %d, want %d", got, n-1)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			opts := append([]asynqlock.Option{asynqlock.WithTTL(time.Second)}, tt.opts...)
			g := e.guard(t, opts...)
			r := newRuns()
			errs := &errorLog{}
			e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
				defer r.enter(ctx)()
				time.Sleep(150 * time.Millisecond) // hold the key while others arrive
				return nil
			}, asynq.Config{
				RetryDelayFunc: asynqlock.RetryDelay(quickRetry),
				IsFailure:      asynqlock.IsFailure,
				ErrorHandler:   errs,
			})
			e.enqueue(t, `{"report":7}`, n, "dup")
			qi := e.waitQueue(t, 20*time.Second, "all tasks handled", drained)

			if got := r.maxActive.Load(); got != 1 {
				t.Errorf("max concurrent handler runs = %d, want 1", got)
			}
			tt.check(t, int(r.total.Load()), errs)
			if qi.Archived != 0 || qi.FailedTotal != 0 {
				t.Errorf("archived %d, failed %d; want 0, 0 (errors: %v)", qi.Archived, qi.FailedTotal, errs.all())
			}
		})
	}
}

func TestLongJobKeepsDuplicateWaiting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const ttl, job = time.Second, 3 * time.Second
	g := e.guard(t, asynqlock.WithTTL(ttl))
	r := newRuns()
	started := make(chan struct{}, 2)
	e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
		defer r.enter(ctx)()
		started <- struct{}{}
		if id, _ := asynq.GetTaskID(ctx); id == "long-0" {
			select {
			case <-time.After(job):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		return nil
	}, asynq.Config{RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure})

	e.enqueue(t, "same", 1, "long")
	<-started
	e.enqueue(t, "same", 1, "dup")
	e.waitQueue(t, 20*time.Second, "both tasks done", func(qi *asynq.QueueInfo) bool {
		return drained(qi) && qi.ProcessedTotal == 2
	})

	spans := r.byTask()
	first, second := spans["long-0"], spans["dup-0"]
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("runs: long-0 %d, dup-0 %d; want 1 each", len(first), len(second))
	}
	if d := first[0].end.Sub(first[0].start); d < job {
		t.Errorf("the long job ran %v, want the full %v (was it cancelled?)", d, job)
	}
	if !second[0].start.After(first[0].end) {
		t.Errorf("duplicate started %v before the long job ended (TTL %v, job %v)",
			first[0].end.Sub(second[0].start), ttl, job)
	}
}

func TestLostLeaseCancelsAndRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const ttl = 900 * time.Millisecond
	g := e.guard(t, asynqlock.WithTTL(ttl))
	r := newRuns()
	errs := &errorLog{}
	type cancelled struct {
		at    time.Time
		cause error
	}
	leases := make(chan lock.Lease, 1)
	done := make(chan cancelled, 1)
	e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
		defer r.enter(ctx)()
		if r.total.Load() > 1 {
			return nil // the retry
		}
		l, ok := lock.LeaseFrom(ctx)
		if !ok {
			return errors.New("no lease in the handler's context")
		}
		leases <- l
		select {
		case <-ctx.Done():
			done <- cancelled{time.Now(), context.Cause(ctx)}
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return errors.New("context never cancelled")
		}
	}, asynq.Config{RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure, ErrorHandler: errs})

	e.enqueue(t, "x", 1, "lost")
	l := <-leases
	deleted := time.Now()
	if err := e.lockRC.Del(context.Background(), e.storageKey(t, l)).Err(); err != nil {
		t.Fatal(err)
	}
	c := <-done
	if d, limit := c.at.Sub(deleted), ttl/3+600*time.Millisecond; d > limit {
		t.Errorf("handler cancelled %v after the key was deleted, want within %v (ttl/3 + slack)", d, limit)
	}
	if !errors.Is(c.cause, lock.ErrLeaseLost) {
		t.Errorf("context.Cause = %v, want lock.ErrLeaseLost", c.cause)
	}
	qi := e.waitQueue(t, 20*time.Second, "the retry done", func(qi *asynq.QueueInfo) bool {
		return drained(qi) && r.total.Load() == 2
	})
	if got := errs.all(); len(got) != 1 || !errors.Is(got[0], lock.ErrLeaseLost) || !asynqlock.IsFailure(got[0]) {
		t.Errorf("task errors = %v, want one failure matching lock.ErrLeaseLost", got)
	}
	if qi.FailedTotal != 1 || qi.ProcessedTotal != 2 {
		t.Errorf("failed %d, processed %d; want 1, 2", qi.FailedTotal, qi.ProcessedTotal)
	}
}

// TestRequeueRunsEveryTaskWithoutFailures: tasks that find their key busy
// (duplicates) or full (a limit) on 10 workers are requeued until they
// run: never more at once than the key allows, every task exactly once,
// and no requeue counts as a failure.
func TestRequeueRunsEveryTaskWithoutFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		desc     string
		opts     []asynqlock.Option
		n        int   // tasks, all of one type and payload
		peak     int64 // handler runs at once
		requeued func(error) bool
	}{
		{"duplicates", nil, 8, 1, busyDup},
		// 100 tasks of one type, at most 2 running, requeued
		// at once rather than waiting for a slot.
		{"limit 2", []asynqlock.Option{asynqlock.WithLimit(2), asynqlock.WithLimitWait(0)}, 100, 2, asynqlock.IsLimited},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			// A short TTL keeps RetryDelay's delays short: they are bounded
			// by the holder's (the earliest holder's) expiry.
			g := e.guard(t, append([]asynqlock.Option{asynqlock.WithTTL(300 * time.Millisecond)}, tt.opts...)...)
			r := newRuns()
			errs := &errorLog{}
			e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
				defer r.enter(ctx)()
				time.Sleep(10 * time.Millisecond)
				return nil
			}, asynq.Config{RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure, ErrorHandler: errs})

			e.enqueue(t, "same", tt.n, "rq")
			qi := e.waitQueue(t, 60*time.Second, "every task run", func(qi *asynq.QueueInfo) bool {
				return drained(qi) && r.total.Load() == int64(tt.n)
			})

			if got := r.maxActive.Load(); got != tt.peak {
				t.Errorf("max concurrent handler runs = %d, want %d", got, tt.peak)
			}
			spans := r.byTask()
			for i := range tt.n {
				if id := "rq-" + strconv.Itoa(i); len(spans[id]) != 1 {
					t.Errorf("task %s ran %d times, want 1", id, len(spans[id]))
				}
			}
			requeued := errs.count(tt.requeued)
			if requeued == 0 {
				t.Errorf("no task was requeued; the test did not exercise Requeue")
			}
			if other := len(errs.all()) - requeued; other != 0 {
				t.Errorf("%d errors other than the expected requeues: %v", other, errs.all())
			}
			// IsFailure keeps requeues out of the stats and the retry counts.
			if qi.FailedTotal != 0 || qi.ProcessedTotal != tt.n || qi.Archived != 0 {
				t.Errorf("failed %d, processed %d, archived %d; want 0, %d, 0", qi.FailedTotal, qi.ProcessedTotal, qi.Archived, tt.n)
			}
			t.Logf("%d tasks, %d requeues", tt.n, requeued)
		})
	}
}

func TestEmptyKeyArchivesWithoutRedis(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.guard(t, asynqlock.WithKeyFunc(func(context.Context, *asynq.Task) (string, error) { return "", nil }))
	r := newRuns()
	e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
		defer r.enter(ctx)()
		return nil
	}, asynq.Config{RetryDelayFunc: quickRetry})

	e.enqueue(t, "x", 1, "bad")
	e.waitQueue(t, 10*time.Second, "one archived task", func(qi *asynq.QueueInfo) bool {
		return qi.Archived == 1 && drained(qi)
	})
	if got := r.total.Load(); got != 0 {
		t.Errorf("handler runs = %d, want 0", got)
	}
	if got := e.cmds.Commands.Load(); got != 0 {
		t.Errorf("commands sent by the lock backend = %d, want 0", got)
	}
	archived, err := e.insp.ListArchivedTasks(e.queue)
	if err != nil || len(archived) != 1 {
		t.Fatalf("ListArchivedTasks = %d tasks, %v; want 1", len(archived), err)
	}
	if got := archived[0]; got.Retried != 0 || !strings.Contains(got.LastErr, "invalid lock key") {
		t.Errorf("archived task: retried %d, last error %q; want 0 retries and an invalid-key error", got.Retried, got.LastErr)
	}
}

func TestBackendDownFailsRetryably(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	down := redistest.Start(t)
	down.Stop(t)
	b, err := redisbackend.New(down.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := asynqlock.New(b)
	if err != nil {
		t.Fatal(err)
	}
	r := newRuns()
	errs := &errorLog{}
	e.serve(t, g, func(ctx context.Context, _ *asynq.Task) error {
		defer r.enter(ctx)()
		return nil
	}, asynq.Config{
		// Keep the failed task in the retry set while the test looks at it.
		RetryDelayFunc: asynqlock.RetryDelay(func(int, error, *asynq.Task) time.Duration { return time.Hour }),
		IsFailure:      asynqlock.IsFailure,
		ErrorHandler:   errs,
	})

	e.enqueue(t, "x", 1, "down")
	qi := e.waitQueue(t, 20*time.Second, "the task in the retry set", func(qi *asynq.QueueInfo) bool {
		return qi.Retry == 1
	})
	if got := r.total.Load(); got != 0 {
		t.Errorf("handler runs = %d, want 0", got)
	}
	got := errs.all()
	if len(got) != 1 {
		t.Fatalf("task errors = %v, want 1", got)
	}
	err = got[0]
	switch {
	case errors.Is(err, asynq.SkipRetry), errors.Is(err, asynq.RevokeTask), asynqlock.IsDuplicate(err):
		t.Errorf("error %v: not retryable, want a retryable failure", err)
	case lock.CodeOf(err) != lock.CodeServiceUnavailable && lock.CodeOf(err) != lock.CodeNetworkTimeout:
		t.Errorf("lock.CodeOf(%v) = %q, want ServiceUnavailable or NetworkTimeout", err, lock.CodeOf(err))
	}
	if qi.FailedTotal != 1 || qi.Archived != 0 {
		t.Errorf("failed %d, archived %d; want 1, 0", qi.FailedTotal, qi.Archived)
	}
}
