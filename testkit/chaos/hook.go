package chaos

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Hook returns the lock.Hook that records worker's calls in h, for
// lock.WithHooks. Each call is recorded once, with the outcome the caller
// saw; a failed call is Ambiguous. Every path of a wrapped backend is
// recorded: slots, queued waiters' attempts, hand-offs, lookups, and each
// lease of an ExtendBatch as an Extend spanning the batch.
func (h *History) Hook(worker int) lock.Hook {
	return &recorder{h: h, worker: worker}
}

// recorder is the lock.Hook of one worker.
type recorder struct {
	h      *History
	worker int
}

// waitKey is the context key of the wait (lock.OpWait) an event belongs
// to.
type waitKey struct{}

// wait is what a hand-off (lock.OpGranted) needs to know of its wait.
type wait struct {
	call  int64 // when the wait began
	limit int   // the n of a wait for a slot; 0 for the lock
}

// Operation records op once next has run it.
func (r *recorder) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		switch op.Kind {
		case lock.OpWait:
			ctx = context.WithValue(ctx, waitKey{}, wait{call: time.Now().UnixNano(), limit: max(op.Limit, 0)})
			return next(ctx, op)
		case lock.OpGranted:
			err := next(ctx, op)
			r.granted(ctx, op)
			return err
		case lock.OpRetry, lock.OpLeaseLost: // nothing the checks use
			return next(ctx, op)
		case lock.OpAcquireMulti, lock.OpReleaseMulti:
			return r.multi(ctx, op, next)
		}
		call := time.Now().UnixNano()
		if op.Kind == lock.OpAcquire {
			r.h.try(op.ID, call)
		}
		err := next(ctx, op)
		ret := time.Now().UnixNano()
		switch op.Kind {
		case lock.OpAcquire:
			if err == nil && op.Lease.ID == "" {
				// Recorder.AcquireDone or AcquireRecord answered with the
				// key's mark and took nothing: a read.
				r.lookedUp(ctx, op, call, ret, err)
				break
			}
			r.acquired(call, ret, op.Key, max(op.Limit, 0), op.Mode, deadlineNs(ctx), op.Lease, err)
		case lock.OpRelease, lock.OpReleaseDone, lock.OpReleaseRecord:
			r.released(ctx, op.ID, call, ret, err)
		case lock.OpExtend:
			r.extended(ctx, op.ID, call, ret, op.ExpiresAt, err)
		case lock.OpExtendBatch:
			for i, q := range op.Leases {
				rs := lock.ExtendResult{Err: errors.New("chaos: no result for this lease in the batch")}
				if i < len(op.Results) {
					rs = op.Results[i]
				}
				r.extended(ctx, q.ID, call, ret, rs.ExpiresAt, rs.Err)
			}
		case lock.OpIsLocked, lock.OpLookupKey, lock.OpLookupID, lock.OpLookupLimit, lock.OpIsDone, lock.OpRecord:
			r.lookedUp(ctx, op, call, ret, err)
		}
		return err
	}
}

// try notes that an attempt with lock id id ("": none chosen) was made
// at call, for the grants later reported for it: the backend cannot have
// granted a lease to id (not even by a hand-off, which goes to a waiter
// that an attempt put in the queue) before its first attempt.
func (h *History) try(id string, call int64) {
	if id == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.tried[id]; !ok || call < t {
		h.tried[id] = call
	}
}

// granted records the lease op a release handed to a waiter, which
// lock.Acquire returns, as an Acquire from the start of the wait to now,
// unless an attempt already reported it.
func (r *recorder) granted(ctx context.Context, op *lock.Op) {
	l := op.Lease
	if l.ID == "" {
		return
	}
	r.h.mu.Lock()
	known := r.h.byID[l.ID] != nil
	call, ok := r.h.tried[l.ID]
	r.h.mu.Unlock()
	if known {
		return
	}
	w, inWait := ctx.Value(waitKey{}).(wait)
	limit := max(op.Limit, 0)
	if inWait {
		call, limit = w.call, w.limit
	} else if !ok {
		call = time.Now().UnixNano()
	}
	r.acquired(call, time.Now().UnixNano(), l.Key, limit, op.Mode, 0, l, nil)
}

// acquired records an Acquire (of a slot of n, when n > 0; of a
// read-write lock in mode, when set) called at call that returned at ret
// with l, err.
func (r *recorder) acquired(call, ret int64, key string, n int, mode string, deadline int64, l lock.Lease, err error) {
	op := Op{Kind: Acquire, Key: key, Worker: r.worker, CallNs: call, ReturnNs: ret, DeadlineNs: deadline, Outcome: outcome(err)}
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	if err == nil {
		op.Fence = l.Fence
		op.ExpiresMs = l.ExpiresAt.UnixMilli()
		op.FromNs = call
		if t, ok := r.h.tried[l.ID]; ok && t < call {
			op.FromNs = t
		}
		if g := r.h.byID[l.ID]; g != nil {
			// The same lease again (an acquire that got its own grant
			// back): one grant.
			g.ExpiresMs = max(g.ExpiresMs, op.ExpiresMs)
		} else {
			g := &Grant{
				Key: l.Key, Fence: l.Fence, Worker: r.worker, Limit: n, Mode: mode, CallNs: op.FromNs, ReturnNs: ret,
				AcquiredMs: l.ExpiresAt.Add(-l.TTL).UnixMilli(), ExpiresMs: l.ExpiresAt.UnixMilli(),
			}
			r.h.grants = append(r.h.grants, g)
			r.h.byID[l.ID] = g
		}
	}
	r.h.record(op, err)
}

// extended records an Extend of lease id called at call that returned at
// ret with exp, err.
func (r *recorder) extended(ctx context.Context, id string, call, ret int64, exp time.Time, err error) {
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	g := r.h.byID[id]
	if g == nil {
		r.h.unknownIDs++
		return
	}
	op := Op{Kind: Extend, Key: g.Key, Fence: g.Fence, Worker: r.worker, CallNs: call, ReturnNs: ret, DeadlineNs: deadlineNs(ctx), Outcome: outcome(err)}
	if err == nil {
		op.ExpiresMs = exp.UnixMilli()
		if op.ExpiresMs > g.ExpiresMs {
			g.ExpiresMs = op.ExpiresMs
		}
	}
	r.h.record(op, err)
}

// released records a Release of lease id (with a mark or not) called at
// call that returned at ret with err.
func (r *recorder) released(ctx context.Context, id string, call, ret int64, err error) {
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	g := r.h.byID[id]
	if g == nil {
		// The id of an acquire whose outcome its caller never learned
		// (lock.Acquire frees it when it gives up): it may free a lease
		// no worker knew of, which no check relies on.
		r.h.orphanReleases[[...]string{"ok", "not held", "busy", "failed"}[outcome(err)]]++
		return
	}
	op := Op{Kind: Release, Key: g.Key, Fence: g.Fence, Worker: r.worker, CallNs: call, ReturnNs: ret, DeadlineNs: deadlineNs(ctx), Outcome: outcome(err)}
	if g.ReleaseCallNs == 0 {
		g.ReleaseCallNs = call
	}
	if err == nil {
		g.Released = true
	}
	r.h.record(op, err)
}

// lookedUp records a lookup op called at call that returned at ret with
// err: of a key, or of a lease id (its grant's key, "" when no worker was
// granted it).
func (r *recorder) lookedUp(ctx context.Context, op *lock.Op, call, ret int64, err error) {
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	key := op.Key
	if op.ID != "" {
		if g := r.h.byID[op.ID]; g != nil {
			key = g.Key
		}
	}
	rec := Op{Kind: Lookup, Key: key, Worker: r.worker, CallNs: call, ReturnNs: ret, DeadlineNs: deadlineNs(ctx), Outcome: outcome(err)}
	if err == nil && op.Info != nil {
		rec.Fence = op.Info.Fence
	}
	r.h.record(rec, err)
}
