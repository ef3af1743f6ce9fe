package asynqlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestUniqueStalledRedis: a unique enqueue ends by its context's deadline
// while Redis stalls (SIGSTOP) at each of its steps: asynq's look-up of
// the recorded task, asynq's enqueue, and the lock backend's release
// writing the record. The backend and asynq are on servers of their own,
// so that one step stalls at a time. go-redis's default options: without
// ContextTimeoutEnabled it waits for a reply past the deadline.
func TestUniqueStalledRedis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		desc     string
		recorded bool // a dead task of the key is recorded: the enqueue looks it up
		stall    string
	}{
		{"the recorded task's look-up", true, "asynq"},
		{"asynq's enqueue", false, "asynq"},
		{"the release writing the record", false, "lock, after asynq's enqueue"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			lockSrv, asynqSrv := redistest.Start(t), redistest.Start(t)
			queue := testQueue()
			var afterScript scriptHook
			arc := asynqSrv.Client(t)
			arc.AddHook(&afterScript)
			p := newUniqueProducer(t, lockSrv.Client(t), redistest.Prefix(t))
			p.c, p.insp = asynq.NewClientFromRedisClient(arc), asynq.NewInspectorFromRedisClient(arc)
			if tt.recorded {
				info, err := p.enqueue(context.Background(), queue, "s", nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.insp.DeleteTask(queue, info.ID); err != nil {
					t.Fatal(err)
				}
			}
			stalled := asynqSrv
			if tt.stall == "asynq" {
				asynqSrv.Pause(t)
			} else {
				stalled = lockSrv
				afterScript.arm(func() { lockSrv.Pause(t) })
			}
			var resume sync.Once
			defer resume.Do(func() { stalled.Resume(t) })
			const timeout, margin = 300 * time.Millisecond, 250 * time.Millisecond
			type outcome struct {
				info *asynq.TaskInfo
				err  error
				took time.Duration
			}
			done := make(chan outcome, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				start := time.Now()
				info, err := p.enqueue(ctx, queue, "s", nil)
				done <- outcome{info, err, time.Since(start)}
			}()
			var o outcome
			select {
			case o = <-done:
			case <-time.After(3 * time.Second): // go-redis would wait 5 s, its read timeout
				resume.Do(func() { stalled.Resume(t) })
				o = <-done
			}
			resume.Do(func() { stalled.Resume(t) })
			if o.took > timeout+margin {
				t.Errorf("the enqueue took %v with a deadline of %v", o.took, timeout)
			}
			if tt.stall == "asynq" {
				if !errors.Is(o.err, context.DeadlineExceeded) || lock.CodeOf(o.err) != lock.CodeNetworkTimeout {
					t.Fatalf("enqueue: %v, %v; want a NetworkTimeout matching context.DeadlineExceeded", o.info, o.err)
				}
				// A task the stalled enqueue may have left is found by its id.
				info, err := p.enqueue(context.Background(), queue, "s", nil)
				var dup *asynqlock.DuplicateTaskError
				if err != nil && !errors.As(err, &dup) {
					t.Fatalf("enqueue once Redis serves again: %v", err)
				}
				if err == nil {
					dup = &asynqlock.DuplicateTaskError{TaskID: info.ID}
				}
				if _, err := p.enqueue(context.Background(), queue, "s", nil); !errors.As(err, &dup) {
					t.Fatalf("a second enqueue once Redis serves again: %v, want a duplicate", err)
				}
				return
			}
			if o.err != nil {
				t.Fatalf("enqueue: %v; want the task enqueued", o.err)
			}
			// The release went on in the background and recorded the task.
			_, err := p.enqueue(context.Background(), queue, "s", nil)
			var dup *asynqlock.DuplicateTaskError
			if !errors.As(err, &dup) || dup.TaskID != o.info.ID {
				t.Fatalf("enqueue once Redis serves again: %v, want a duplicate of %s", err, o.info.ID)
			}
		})
	}
}

// scriptHook is a go-redis hook that runs a function once, after the
// next script command (EVAL, EVALSHA) has its reply.
type scriptHook struct{ f atomic.Pointer[func()] }

// arm makes f run after the next script command.
func (h *scriptHook) arm(f func()) { h.f.Store(&f) }

// DialHook implements redis.Hook.
func (h *scriptHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook implements redis.Hook.
func (h *scriptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook implements redis.Hook.
func (h *scriptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if n := cmd.Name(); n == "eval" || n == "evalsha" {
			if f := h.f.Swap(nil); f != nil {
				(*f)()
			}
		}
		return err
	}
}
