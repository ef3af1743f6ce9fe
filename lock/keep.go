package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Heartbeat configures how [Keep], and so Do and Hold, keep a lease
// alive: see [WithHeartbeat].
type Heartbeat struct {
	Interval time.Duration             // between extensions; 0: a third of the lease's TTL
	OnExtend func(expiresAt time.Time) // after each extension, with the new expiry
	OnError  func(err error)           // after each failed extension that Keep retries
	// Unbatched extends the lease from a goroutine of its own under the
	// caller's ctx, so that the calls carry ctx's values, such as a span,
	// even where Keep would batch it.
	Unbatched bool
}

// WithHeartbeat sets the heartbeat of Keep, Do and Hold; the zero
// Heartbeat is the default. Its functions are not called once stop or the
// release has returned, so they must not call them. They must return
// quickly: they may run on the backend's one keep-alive goroutine.
func WithHeartbeat(h Heartbeat) Option {
	return optionFunc(func(c *config) { c.heartbeat = h })
}

// Keep keeps lease l alive until stop is called or ctx ends: it extends
// the lease by l.TTL every interval of [WithHeartbeat] and retries a
// transient failure until the lease would expire. held ends with a cause
// matching [ErrLeaseLost] when the lease is lost. stop ends the heartbeat
// and returns the loss, or nil; it does not release. On an [IDBackend]
// with [Locals] all leases are extended in batches from one goroutine,
// unless the heartbeat is Unbatched.
func Keep(ctx context.Context, b Backend, l Lease, opts ...Option) (held context.Context, stop func() error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return keep(ctx, b, l, c.heartbeat)
}

// keep is Keep with heartbeat hb.
func keep(ctx context.Context, b Backend, l Lease, hb Heartbeat) (held context.Context, stop func() error) {
	start := time.Now()
	cfg := hb
	if cfg.Interval == 0 {
		cfg.Interval = l.TTL / 3
	}
	held, cancel := context.WithCancelCause(ctx)
	if l.TTL <= 0 || cfg.Interval <= 0 {
		err := fmt.Errorf("%w: %w", ErrLeaseLost, invalid("keep", "lease TTL and interval must be positive"))
		cancel(err)
		return held, func() error { return err }
	}
	k := &keeper{b: b, lease: l, ttl: l.TTL, cfg: cfg, cancel: cancel, ctx: ctx}
	// The lease ends by the local clock at whichever comes first: TTL after
	// now, or its server expiry read as a local time (earlier when the
	// local clock runs ahead, which errs on the safe side).
	k.deadline = start.Add(l.TTL)
	if !l.ExpiresAt.IsZero() && l.ExpiresAt.Before(k.deadline) {
		k.deadline = l.ExpiresAt
	}
	if be, ok := b.(IDBackend); ok && !hb.Unbatched {
		if slot := slotOf(be); slot != nil {
			return held, keepBatched(ctx, be, slot, k)
		}
	}
	loopCtx, loopCancel := context.WithCancel(held)
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.run(loopCtx)
	}()
	var once sync.Once
	stop = func() error {
		once.Do(func() {
			loopCancel()
			<-done
			cancel(nil)
		})
		return k.lost
	}
	return held, stop
}

// keeper is the state of one heartbeat.
type keeper struct {
	b        Backend
	lease    Lease
	ctx      context.Context // the caller's, for the hooks
	ttl      time.Duration
	cfg      Heartbeat
	cancel   context.CancelCauseFunc
	deadline time.Time // local time at which the lease is presumed gone
	lost     error     // set by lose: per lease, before run returns (read after done is closed); batched, under entry.mu
}

func (k *keeper) run(ctx context.Context) {
	timer := time.NewTimer(k.nextDelay(k.cfg.Interval))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		sent := time.Now()
		if k.expired(sent) {
			return
		}
		ectx, cancel := context.WithDeadline(ctx, k.deadline)
		exp, err := k.b.Extend(ectx, k.lease.ID, k.ttl)
		cancel()
		if err != nil && ctx.Err() != nil {
			return // stopped, or the caller's context ended
		}
		next, lost := k.apply(sent, exp, err)
		if lost {
			return
		}
		timer.Reset(next)
	}
}

// expired declares the lease lost, and reports true, when now is past its
// local deadline: no extension succeeded in time.
func (k *keeper) expired(now time.Time) bool {
	if now.Before(k.deadline) {
		return false
	}
	k.lose(errors.New("no extension succeeded before the lease expired"))
	return true
}

// apply applies the outcome of one extension sent at sent (exp, err as
// Extend returns them) to k, on both the per-lease and the batched path.
// It returns the delay until the next attempt, or lost=true once the
// lease is lost (k.lose has run and held is cancelled).
func (k *keeper) apply(sent, exp time.Time, err error) (next time.Duration, lost bool) {
	switch {
	case err == nil:
		k.deadline = sent.Add(k.ttl)
		if k.cfg.OnExtend != nil {
			k.cfg.OnExtend(exp)
		}
		return k.nextDelay(k.cfg.Interval), false
	case errors.Is(err, ErrNotHeld) || CodeOf(err) == CodeInvalidArgument:
		k.lose(err)
		return 0, true
	default:
		if k.cfg.OnError != nil {
			k.cfg.OnError(err)
		}
		return k.nextDelay(max(k.cfg.Interval/4, 10*time.Millisecond)), false
	}
}

// nextDelay bounds a wait so the next attempt comes before the deadline.
func (k *keeper) nextDelay(d time.Duration) time.Duration {
	left := time.Until(k.deadline)
	if half := left / 2; d > half {
		d = max(half, time.Millisecond)
	}
	return d
}

func (k *keeper) lose(err error) {
	k.lost = fmt.Errorf("%w: %w", ErrLeaseLost, err)
	k.cancel(k.lost)
	if _, ok := k.b.(hookChain); ok {
		_ = Emit(k.ctx, k.b, &Op{Kind: OpLeaseLost, Key: k.lease.Key, ID: k.lease.ID, TTL: k.lease.TTL, Lease: k.lease, Err: k.lost}, nil)
	}
}
