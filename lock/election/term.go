package election

import (
	"context"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// stopTimeout bounds how long Lead waits for the backend once fn returned
// or ctx ended. The rest goes on in the background.
const stopTimeout = time.Second

// term is one term won by a campaign.
type term struct {
	b        lock.Backend
	lease    lock.Lease
	identity string
	config   config // Lead's options
}

// holding is a term held by lock.Hold with lock.WithLease, and its
// proclaimer.
type holding struct {
	held    context.Context
	lease   lock.Lease // with its TTL
	release func() error
	stop    func() // the proclaimer's
}

// serve holds the term while fn runs, as one lock.OpTerm of the hooks,
// proclaims it, and announces its end after the release, also on a
// panic. It returns fn's error, the loss and the release's error.
func (t *term) serve(ctx context.Context, fn func(context.Context, lock.Lease) error) (ferr, lost, rerr error) {
	tctx, end := context.WithCancelCause(ctx) // ends when the term is lost
	defer end(nil)
	var h *holding
	defer func() {
		if h == nil {
			// A hook did not let the term start, or ctx ended first.
			releaseUnused(ctx, t.b, t.lease)
			return
		}
		lost, rerr = t.finish(ctx, h)
	}()
	ferr = runTerm(tctx, t.b, t.lease, t.identity, func(hctx context.Context) error {
		var err error
		if h, err = t.hold(hctx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			// ctx ended while the term was being set up (the proclaim is
			// a round trip): fn is not called, and finish releases it.
			return err
		}
		unlink := context.AfterFunc(h.held, func() { end(context.Cause(h.held)) })
		defer func() {
			unlink()
			if cause := context.Cause(h.held); cause != nil {
				end(cause) // before the hooks' next returns
			}
		}()
		return fn(h.held, h.lease)
	})
	return ferr, lost, rerr
}

// hold keeps the term with lock.Hold and starts proclaiming it. The
// heartbeat is Unbatched, so that its extensions run under ctx and carry
// its values, such as the term's span.
func (t *term) hold(ctx context.Context) (*holding, error) {
	store := storeOf(t.b)
	p := &proclaimer{store: store, term: t.lease, identity: t.identity, poke: make(chan struct{}, 1)}
	hb := t.config.heartbeat
	hb.Unbatched = true
	onExtend := hb.OnExtend
	hb.OnExtend = func(exp time.Time) {
		if onExtend != nil {
			onExtend(exp)
		}
		p.kick() // the heartbeat's goroutine must not wait for Redis
	}
	if err := ctx.Err(); err != nil {
		return nil, err // the term ended before it started
	}
	l := t.lease
	if l.TTL <= 0 {
		l.TTL = t.config.ttl
	}
	held, _, release, err := lock.Hold(ctx, t.b, l.Key, t.config.holdOptions(l, hb)...)
	if err != nil {
		return nil, err
	}
	p.term = l
	return &holding{held: held, lease: l, release: release, stop: p.start(held)}, nil
}

// finish releases the term and announces its end, within stopTimeout.
func (t *term) finish(ctx context.Context, h *holding) (lost, rerr error) {
	deadline := time.Now().Add(stopTimeout)
	lost = context.Cause(h.held)
	rerr = h.release()
	h.stop()
	if store := storeOf(t.b); store != nil && time.Now().Before(deadline) {
		actx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		_ = store.Announce(actx, h.lease)
		cancel()
	}
	return lost, rerr
}

// releaseUnused releases a term won as ctx ended, within stopTimeout.
func releaseUnused(ctx context.Context, b lock.Backend, l lock.Lease) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	_ = b.Release(rctx, l.ID)
}

// proclaimer proclaims one term at its start and after each extension.
type proclaimer struct {
	store    Store // nil: nothing to proclaim
	term     lock.Lease
	identity string
	poke     chan struct{} // capacity 1
}

// kick asks for a proclaim without waiting.
func (p *proclaimer) kick() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// start proclaims the term, then on each kick until stop.
func (p *proclaimer) start(held context.Context) (stop func()) {
	if p.store == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(held)
	p.proclaim(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-p.poke:
				p.proclaim(ctx)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// proclaim stores and announces the term; the next extension retries.
func (p *proclaimer) proclaim(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, p.term.TTL/3+time.Millisecond)
	defer cancel()
	_ = p.store.Proclaim(ctx, p.term, p.identity)
}

// runTerm runs run as a lock.OpTerm event through b's hooks. It returns
// run's error, or a hook's when run did not start. The hooks see the
// term's end with ctx's cause, when ctx ended, else with run's error.
func runTerm(ctx context.Context, b lock.Backend, l lock.Lease, identity string, run func(ctx context.Context) error) error {
	var ran bool
	var runErr error
	op := &lock.Op{Kind: lock.OpTerm, Key: l.Key, ID: l.ID, TTL: l.TTL, Lease: l, Identity: identity}
	err := lock.Emit(ctx, b, op, func(hctx context.Context, _ *lock.Op) error {
		ran = true
		runErr = run(hctx)
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		return runErr
	})
	if ran {
		return runErr
	}
	return err
}
