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

// ErrDone is returned by Locker.Lock when another run of the job started
// within the window.
var ErrDone = errors.New("gocronlock: the job ran within its window")

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
// error matching lock.ErrLocked when the job runs elsewhere, and ErrDone
// when it ran within the window.
func (l *Locker) Lock(ctx context.Context, key string) (gocron.Lock, error) {
	r := &run{l: l, jobCtx: ctx, start: time.Now()}
	opts := append(l.opts[:len(l.opts):len(l.opts)], lock.WithReleaseFunc(r.release))
	held, lease, release, err := lock.Hold(ctx, l.b, l.prefix+key, opts...)
	if err != nil {
		return nil, err
	}
	r.held, r.lease, r.releaseFn = held, lease, release
	if l.rec != nil {
		done, err := l.rec.IsDone(held, lease.Key)
		if err != nil || done {
			_ = release()
			if err == nil {
				err = ErrDone
			}
			return nil, err
		}
		r.mark = true
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
