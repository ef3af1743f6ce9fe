package multilock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// errReleased is the cause of a held context ended by its release.
var errReleased = fmt.Errorf("%w: released", lock.ErrLeaseLost)

// Do runs fn while holding every key, as lock.Do does for one: Hold, then
// fn under the held context, then the release of all the keys, also when
// fn panics. leases[i] is the lease of keys[i]. fn's context ends with a
// cause matching lock.ErrLeaseLost when any lease is lost.
//
// Do returns fn's error, joined with one matching lock.ErrLeaseLost when
// a lease was lost meanwhile; lock.ErrLeaseLost alone when fn returned
// nil. Acquisition errors are Hold's.
func Do(ctx context.Context, b lock.Backend, keys []string, fn func(ctx context.Context, leases []lock.Lease) error, opts ...lock.Option) (err error) {
	if fn == nil {
		return lockdriver.InvalidArgument("do", "nil function")
	}
	held, leases, release, err := Hold(ctx, b, keys, opts...)
	if err != nil {
		return err
	}
	defer func() {
		// Runs on return and on panic alike.
		if lost := release(); lost != nil {
			if err == nil {
				err = lost
			} else {
				err = fmt.Errorf("%w; %w", err, lost)
			}
		}
	}()
	return fn(held, leases)
}

// Hold takes every key of keys, all or none, and keeps the leases alive
// until release is called; leases[i] is the lease of keys[i]. held
// carries them for LeasesFrom; it ends with a cause matching
// lock.ErrLeaseLost when any lease is lost, at release, and when ctx ends.
//
// It waits for busy keys as lock.Acquire does, for at most lock.WithWait
// in all: when it gives up, the error has lock.CodeAcquisitionTimeout and
// matches lock.ErrLocked, and nothing is held. Bad input (no keys, more
// than MaxKeys, a duplicate after NFC, a bad key, an option about one
// key's lease, a backend that is not a lock.IDBackend) is an
// InvalidArgument error, before any I/O.
//
// release frees every key together under a context of its own,
// lock.WithReleaseTimeout, and returns an error matching
// lock.ErrLeaseLost when a lease was lost first. It is idempotent.
func Hold(ctx context.Context, b lock.Backend, keys []string, opts ...lock.Option) (held context.Context, leases []lock.Lease, release func() error, err error) {
	r, err := newRequest(ctx, "acquire", b, keys, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	a := &acquisition{request: r}
	if err := a.take(ctx); err != nil {
		return nil, nil, nil, err
	}
	h := keepAll(ctx, r, a.keeps)
	return h.held, a.inOrder(), h.release, nil
}

// leasesKey is the context key of the leases of Do and Hold.
type leasesKey struct{}

// LeasesFrom returns the leases of a context from Do or Hold, in the
// order of their keys. Whether they are still held is what the context's
// end tells.
func LeasesFrom(ctx context.Context) ([]lock.Lease, bool) {
	l, ok := ctx.Value(leasesKey{}).([]lock.Lease)
	return slices.Clone(l), ok
}

// holding is the leases of one Hold, in the canonical order.
type holding struct {
	r      *request
	ctx    context.Context // the caller's: the release detaches from it
	held   context.Context
	leases []lock.Lease
	cancel context.CancelCauseFunc
	stops  []func() error // Keep's, one per lease

	once sync.Once
	lost error
}

// keepAll holds the leases that keeps keep alive (lock.Keep: on an
// IDBackend with Locals, in the same batches), and ends held when any one
// is lost.
func keepAll(ctx context.Context, r *request, keeps []*kept) *holding {
	h := &holding{r: r, ctx: ctx, leases: make([]lock.Lease, len(keeps))}
	inOrder := make([]lock.Lease, len(keeps))
	for i, k := range keeps {
		h.leases[i], inOrder[r.from[i]] = k.lease, k.lease
	}
	h.held, h.cancel = context.WithCancelCause(context.WithValue(ctx, leasesKey{}, inOrder))
	for _, k := range keeps {
		h.stops = append(h.stops, k.stop)
		context.AfterFunc(k.held, func() { h.cancel(context.Cause(k.held)) })
	}
	return h
}

// release ends the leases once: it cancels held, stops the heartbeats
// and releases every lease in one call. It returns the first loss.
func (h *holding) release() error {
	h.once.Do(func() {
		h.cancel(errReleased)
		for _, stop := range h.stops {
			if lost := stop(); lost != nil && h.lost == nil {
				h.lost = lost
			}
		}
		start := time.Now()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), h.r.set.ReleaseTimeout)
		defer cancel()
		var again []lock.Lease
		told := false
		for i, err := range h.r.s.release(rctx, h.leases) {
			switch {
			case err == nil:
			case errors.Is(err, lock.ErrNotHeld):
				if h.lost == nil {
					h.lost = fmt.Errorf("%w: found at release: %w", lock.ErrLeaseLost, err)
				}
			default:
				if !told { // the first failure only, as lock.Do's
					h.r.set.OnReleaseError(h.leases[i], err)
					told = true
				}
				if lock.CodeOf(err).Transient() || errors.Is(err, context.DeadlineExceeded) {
					again = append(again, h.leases[i])
				}
			}
		}
		if len(again) > 0 {
			go h.releaseAgain(again, start)
		}
	})
	return h.lost
}

// releaseAgain tries the release of leases again in the background, after
// a transient failure, until the store answers or their TTL has passed.
func (h *holding) releaseAgain(leases []lock.Lease, start time.Time) {
	ctx, cancel := context.WithDeadline(context.WithoutCancel(h.ctx), start.Add(h.r.set.TTL))
	defer cancel()
	lockdriver.RetryCleanup(ctx, func(ctx context.Context) error {
		tctx, cancel := context.WithTimeout(ctx, h.r.set.ReleaseTimeout)
		defer cancel()
		var left []lock.Lease
		var first error
		for i, err := range h.r.s.release(tctx, leases) {
			if err != nil && !errors.Is(err, lock.ErrNotHeld) {
				left = append(left, leases[i])
				first = cmpOr(first, err)
			}
		}
		leases = left
		return first
	}, func(err error) bool { return lock.CodeOf(err).Transient() || errors.Is(err, context.DeadlineExceeded) })
}

// cmpOr returns a when it is set, else b.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
