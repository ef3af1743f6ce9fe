package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// KeepOption configures [Keep] (and, through [WithKeepOptions], the
// heartbeat of Do and Hold).
type KeepOption interface {
	applyKeep(*keepConfig)
}

type keepOptionFunc func(*keepConfig)

func (f keepOptionFunc) applyKeep(c *keepConfig) { f(c) }

type keepConfig struct {
	interval time.Duration
	onExtend func(expiresAt time.Time)
	onError  func(error)
}

// WithKeepInterval sets how often the lease is extended. The default is a
// third of the lease's TTL, so two heartbeats can fail before the lease
// expires.
func WithKeepInterval(d time.Duration) KeepOption {
	return keepOptionFunc(func(c *keepConfig) { c.interval = d })
}

// WithKeepOnExtend registers a function called after every successful
// extension with the new expiry by the backend's clock.
func WithKeepOnExtend(f func(expiresAt time.Time)) KeepOption {
	return keepOptionFunc(func(c *keepConfig) { c.onExtend = f })
}

// WithKeepOnError registers a function called with every failed extension
// that Keep will retry (transient errors such as a network timeout).
func WithKeepOnError(f func(error)) KeepOption {
	return keepOptionFunc(func(c *keepConfig) { c.onError = f })
}

// Keep keeps lease l alive until stop is called or ctx ends. It extends the
// lease by l.TTL every interval (default l.TTL/3); a transient failure is
// retried until the lease would expire. When the lease is lost (the backend
// reports [ErrNotHeld] or an InvalidArgument error, or no extension
// succeeded before expiry by the local clock), held is cancelled with a
// cause matching [ErrLeaseLost], which context.Cause(held) returns, and the
// hooks of a Backend from [WithHooks] see an OpLeaseLost.
//
// Run the protected work under held. stop ends the heartbeat, cancels
// held, and returns the loss error if the lease was lost, nil otherwise.
// After stop returns, the WithKeepOnExtend and WithKeepOnError functions
// are not called again for this lease (so they must not call stop
// themselves). stop is idempotent; it does not release the lease.
//
// Keep runs the heartbeat in one of two ways, with the same semantics:
//
//   - When b is an [IDBackend] (redisbackend is), the lease
//     joins the one scheduler of that backend: a single goroutine, which
//     exits while no lease is kept, that sends the extensions of every
//     lease due within a short coalescing window (a tenth of the lease's
//     interval, at most a second) in one ExtendBatch call of at most
//     1,000 leases, one call in flight at a time. Thousands of leases
//     then cost a few round trips per second and no goroutine each.
//     The WithKeepOnExtend and WithKeepOnError functions are called from
//     that goroutine and must return quickly.
//   - Otherwise each lease gets a goroutine of its own calling Extend.
//
// Options apply per lease on both paths.
func Keep(ctx context.Context, b Backend, l Lease, opts ...KeepOption) (held context.Context, stop func() error) {
	start := time.Now()
	cfg := keepConfig{interval: l.TTL / 3}
	for _, o := range opts {
		if o != nil {
			o.applyKeep(&cfg)
		}
	}
	held, cancel := context.WithCancelCause(ctx)
	if l.TTL <= 0 || cfg.interval <= 0 {
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
	if be, ok := b.(IDBackend); ok && batchable(be) {
		return held, keepBatched(ctx, be, k)
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
	cfg      keepConfig
	cancel   context.CancelCauseFunc
	deadline time.Time // local time at which the lease is presumed gone
	lost     error     // set by lose: per lease, before run returns (read after done is closed); batched, under entry.mu
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
		if k.cfg.onExtend != nil {
			k.cfg.onExtend(exp)
		}
		return k.nextDelay(k.cfg.interval), false
	case errors.Is(err, ErrNotHeld) || CodeOf(err) == CodeInvalidArgument:
		k.lose(err)
		return 0, true
	default:
		if k.cfg.onError != nil {
			k.cfg.onError(err)
		}
		return k.nextDelay(max(k.cfg.interval/4, 10*time.Millisecond)), false
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
		_ = emit(k.ctx, k.b, &Op{Kind: OpLeaseLost, Key: k.lease.Key, ID: k.lease.ID, TTL: k.lease.TTL, Lease: k.lease, Err: k.lost}, nil)
	}
}
