package election

import (
	"context"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// announceTimeout bounds the notice that a term ended.
const announceTimeout = time.Second

// term is one term won by a campaign.
type term struct {
	b        lock.Backend
	lease    lock.Lease
	identity string
	settings lockdriver.Settings
}

// serve holds the term while fn runs (lock.Hold's heartbeat, loss and
// release), proclaiming it at its start and after each extension, and
// announces its end after the release. It returns fn's error, the loss
// seen before the release (held's cause) and the release's error.
func (t *term) serve(ctx context.Context, fn func(context.Context, lock.Lease) error, opts []lock.Option) (ferr, lost, rerr error) {
	store := storeOf(t.b)
	p := &proclaimer{store: store, term: t.lease, identity: t.identity, poke: make(chan struct{}, 1)}
	hb := t.settings.Heartbeat
	onExtend := hb.OnExtend
	hb.OnExtend = func(exp time.Time) {
		if onExtend != nil {
			onExtend(exp)
		}
		p.kick() // the heartbeat's goroutine must not wait for Redis
	}
	all := append(append(make([]lock.Option, 0, len(opts)+2), opts...), lock.WithTTL(t.settings.TTL), lock.WithHeartbeat(hb))
	held, l, release, err := lock.Hold(ctx, &granted{Backend: t.b, lease: t.lease}, t.lease.Key, all...)
	if err != nil {
		// Only ctx's end makes Hold fail before its one Acquire.
		releaseUnused(ctx, t.b, t.lease)
		return nil, nil, err
	}
	p.term = l // with its TTL
	stop := p.start(held)
	ferr = runTerm(held, t.b, l, t.identity, fn)
	lost = context.Cause(held)
	rerr = release()
	stop()
	if store != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), announceTimeout)
		_ = store.Announce(actx, l)
		cancel()
	}
	return ferr, lost, rerr
}

// releaseUnused releases a term won as ctx ended, under a context of its
// own, so that the next candidate leads at once.
func releaseUnused(ctx context.Context, b lock.Backend, l lock.Lease) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lockdriver.DefaultReleaseTimeout)
	defer cancel()
	_ = b.Release(rctx, l.ID)
}

// granted is a Backend whose Acquire returns the lease a campaign won, so
// that lock.Hold keeps and releases it as it does its own.
type granted struct {
	lock.Backend
	lease lock.Lease
}

// Acquire returns the won lease.
func (g *granted) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	return g.lease, nil
}

// proclaimer proclaims one term: at once when it starts, then after each
// extension, from a goroutine of its own.
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

// start proclaims the term, then proclaims again on each kick until stop
// (or held's end).
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

// proclaim stores and announces the term; a failure is left to the next
// extension's (a lost term ends held).
func (p *proclaimer) proclaim(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, p.term.TTL/3+time.Millisecond)
	defer cancel()
	_ = p.store.Proclaim(ctx, p.term, p.identity)
}
