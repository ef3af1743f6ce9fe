package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
)

// multi records an attempt of lock/multilock on several keys
// (lock.OpAcquireMulti) as an Acquire per key, and the release of its
// leases together (lock.OpReleaseMulti) as a Release per lease, so that
// every check treats a multi-key lease as the plain lease of its key that
// it is; a lease the attempt found its own (a key multilock waited for
// with lock.Acquire, recorded then) is not recorded again. An attempt
// that found key i busy took nothing: it is a Busy Acquire of that key
// alone. One whose outcome is unknown is an Ambiguous Acquire of every
// key.
func (r *recorder) multi(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	call := time.Now().UnixNano()
	if op.Kind == lock.OpReleaseMulti {
		leases := append([]lock.Lease(nil), op.Leases...)
		err := next(ctx, op)
		ret := time.Now().UnixNano()
		for i, l := range leases {
			lerr := err // a hook further down failed them all
			if len(op.Results) == len(leases) {
				lerr = op.Results[i].Err
			}
			r.released(ctx, l.ID, call, ret, lerr)
		}
		return err
	}
	for _, id := range op.IDs {
		r.h.try(id, call)
	}
	keys := append([]string(nil), op.Keys...)
	err := next(ctx, op)
	ret := time.Now().UnixNano()
	var busy *multilock.BusyError
	switch {
	case err == nil:
		for i, l := range op.Leases {
			r.h.mu.Lock()
			known := r.h.byID[l.ID] != nil
			r.h.mu.Unlock()
			if !known { // a key it waited for with lock.Acquire was reported then
				r.acquired(call, ret, keys[i], 0, "", deadlineNs(ctx), l, nil)
			}
		}
	case errors.As(err, &busy) && busy.Index >= 0 && busy.Index < len(keys):
		r.acquired(call, ret, keys[busy.Index], 0, "", deadlineNs(ctx), lock.Lease{}, err)
	case errors.Is(err, lock.ErrLocked) || errors.Is(err, lock.ErrNotHeld) || lock.CodeOf(err) == lock.CodeInvalidArgument:
		// Took nothing, and says nothing of which key was busy.
	default:
		for _, k := range keys {
			r.acquired(call, ret, k, 0, "", deadlineNs(ctx), lock.Lease{}, err)
		}
	}
	return err
}

// multiKeys picks a multi-key job's keys: 2 to cfg.Multi distinct lock
// keys (never the limit key), in a random order, so that jobs take
// overlapping sets in opposite orders.
func (wk *worker) multiKeys() []string {
	n := 2 + wk.rng.IntN(min(wk.cfg.Multi, wk.cfg.Keys)-1)
	keys := make([]string, n)
	for i, k := range wk.rng.Perm(wk.cfg.Keys)[:n] {
		keys[i] = fmt.Sprintf("key%d", k)
	}
	return keys
}
