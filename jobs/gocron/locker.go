package gocronlock

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/syncguard-go/syncguard/lock"
)

// ErrDone is returned by Locker.Lock when another instance fired the job
// within the window of this one's firing, and ran it.
var ErrDone = errors.New("gocronlock: the job ran within its window")

// ErrLate is returned by Locker.Lock when the backend answered later than
// the lease's TTL after the job fired: too late to tell whether another
// instance ran the scheduled time, so the run is skipped.
var ErrLate = errors.New("gocronlock: the backend answered too late to tell whether the job ran within its window")

// Locker is a gocron.Locker on a lock.Backend: one run per scheduled time
// happens across instances. It is safe for concurrent use.
type Locker struct {
	b      lock.Backend
	rec    lock.Recorder // nil when the window is off
	prefix string
	window time.Duration
	opts   []lock.Option

	mu   sync.Mutex
	runs map[context.Context]*run
}

var _ gocron.Locker = (*Locker)(nil)

// NewLocker returns a Locker on b. Bad options are refused without I/O
// with an InvalidArgument *lock.Error.
func NewLocker(b lock.Backend, opts ...Option) (*Locker, error) {
	c, err := newConfig(b, opts)
	if err != nil {
		return nil, err
	}
	l := &Locker{b: b, prefix: c.prefix, window: c.window, runs: map[context.Context]*run{}}
	if c.window > 0 {
		l.rec = b.(lock.Recorder)
	}
	l.opts = append(c.lockOpts, lock.WithWait(0))
	return l, nil
}

// Lock takes the lock of the job named key for one run. It returns an
// error matching lock.ErrLocked when the job runs elsewhere, ErrDone when
// another instance fired it within the window of this firing and ran it,
// and ErrLate when the backend answered too late to tell.
//
// The window is judged by when the instances fired (called Lock), by the
// backend's clock, not by when the backend saw their calls: a call held
// up by a stalled Redis still finds the run of its scheduled time.
func (l *Locker) Lock(ctx context.Context, key string) (gocron.Lock, error) {
	r := &run{l: l, jobCtx: ctx, start: time.Now()}
	opts := append(l.opts[:len(l.opts):len(l.opts)], lock.WithReleaseFunc(r.release))
	held, lease, release, err := lock.Hold(ctx, l.b, l.prefix+key, opts...)
	if err != nil {
		return nil, err
	}
	r.held, r.lease, r.releaseFn = held, lease, release
	if l.rec != nil {
		if err := r.claim(); err != nil {
			_ = release()
			return nil, err
		}
	}
	l.track(r)
	return r, nil
}

// Held returns the context of the run under way for the job whose gocron
// context is ctx, or ctx itself. It ends when the run's lease is lost.
func (l *Locker) Held(ctx context.Context) context.Context {
	if !keyable(ctx) {
		return ctx
	}
	l.mu.Lock()
	r := l.runs[ctx]
	l.mu.Unlock()
	if r == nil {
		return ctx
	}
	return r.held
}

// track makes r's held context reachable through Held.
func (l *Locker) track(r *run) {
	if !keyable(r.jobCtx) {
		return
	}
	l.mu.Lock()
	l.runs[r.jobCtx] = r
	l.mu.Unlock()
}

func (l *Locker) untrack(r *run) {
	if !keyable(r.jobCtx) {
		return
	}
	l.mu.Lock()
	if l.runs[r.jobCtx] == r {
		delete(l.runs, r.jobCtx)
	}
	l.mu.Unlock()
}

// keyable reports whether ctx can be a map key.
func keyable(ctx context.Context) bool {
	return ctx != nil && reflect.TypeOf(ctx).Comparable()
}
