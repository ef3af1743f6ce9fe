package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// KeepOption configures [Keep].
type KeepOption func(*keepConfig)

type keepConfig struct {
	interval time.Duration
	onExtend func(expiresAt time.Time)
	onError  func(error)
}

// KeepInterval sets how often the lease is extended. The default is a third
// of the lease's TTL, so two heartbeats can fail before the lease expires.
func KeepInterval(d time.Duration) KeepOption {
	return func(c *keepConfig) { c.interval = d }
}

// KeepOnExtend registers a function called after every successful
// extension with the new expiry by the backend's clock.
func KeepOnExtend(f func(expiresAt time.Time)) KeepOption {
	return func(c *keepConfig) { c.onExtend = f }
}

// KeepOnError registers a function called with every failed extension
// that Keep will retry (transient errors such as a network timeout).
func KeepOnError(f func(error)) KeepOption {
	return func(c *keepConfig) { c.onError = f }
}

// Keep keeps lease l alive until stop is called or ctx ends. It extends the
// lease by l.TTL every interval (default l.TTL/3); a transient failure is
// retried until the lease would expire. When the lease is lost (the backend
// reports [ErrNotHeld], or no extension succeeded before expiry by the
// local clock), held is cancelled with a cause matching [ErrLeaseLost],
// which context.Cause(held) returns.
//
// Run the protected work under held. stop ends the heartbeat, waits for it,
// cancels held, and returns the loss error if the lease was lost, nil
// otherwise. stop is idempotent; it does not release the lease.
func Keep(ctx context.Context, b Backend, l Lease, opts ...KeepOption) (held context.Context, stop func() error) {
	start := time.Now()
	cfg := keepConfig{interval: l.TTL / 3}
	for _, o := range opts {
		o(&cfg)
	}
	held, cancel := context.WithCancelCause(ctx)
	if l.TTL <= 0 || cfg.interval <= 0 {
		err := fmt.Errorf("%w: %w", ErrLeaseLost, invalid("keep", "lease TTL and interval must be positive"))
		cancel(err)
		return held, func() error { return err }
	}
	loopCtx, loopCancel := context.WithCancel(held)
	k := &keeper{b: b, lease: l, ttl: l.TTL, cfg: cfg, cancel: cancel, ctx: ctx}
	// The lease ends by the local clock at whichever comes first: TTL after
	// now, or its server expiry read as a local time (earlier when the
	// local clock runs ahead, which errs on the safe side).
	k.deadline = start.Add(l.TTL)
	if !l.ExpiresAt.IsZero() && l.ExpiresAt.Before(k.deadline) {
		k.deadline = l.ExpiresAt
	}
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
	ctx      context.Context // the caller's, for the observer
	ttl      time.Duration
	cfg      keepConfig
	cancel   context.CancelCauseFunc
	deadline time.Time // local time at which the lease is presumed gone
	lost     error     // set before run returns; read after done is closed
}

func (k *keeper) run(ctx context.Context) {
	timer := time.NewTimer(k.nextDelay(k.cfg.interval))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		sent := time.Now()
		if !sent.Before(k.deadline) {
			k.lose(errors.New("no extension succeeded before the lease expired"))
			return
		}
		ectx, cancel := context.WithDeadline(ctx, k.deadline)
		exp, err := k.b.Extend(ectx, k.lease.ID, k.ttl)
		cancel()
		switch {
		case err == nil:
			k.deadline = sent.Add(k.ttl)
			if k.cfg.onExtend != nil {
				k.cfg.onExtend(exp)
			}
			timer.Reset(k.nextDelay(k.cfg.interval))
		case ctx.Err() != nil:
			return // stopped, or the caller's context ended
		case errors.Is(err, ErrNotHeld) || CodeOf(err) == CodeInvalidArgument:
			k.lose(err)
			return
		default:
			if k.cfg.onError != nil {
				k.cfg.onError(err)
			}
			timer.Reset(k.nextDelay(max(k.cfg.interval/4, 10*time.Millisecond)))
		}
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
	if o, ok := k.b.(Observer); ok {
		o.ObserveLeaseLost(k.ctx, k.lease, k.lost)
	}
}
