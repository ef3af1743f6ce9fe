package asynqlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Guard runs asynq handlers under a lock per task key (with WithLimit, one
// of n slots per key). It is safe for concurrent use; one Guard may wrap
// any number of handlers.
type Guard struct {
	b         lock.Backend
	recorder  lock.Recorder // nil unless WithDoneTTL
	keyFunc   KeyFunc
	prefix    string
	ttl       time.Duration
	policy    Policy
	doneTTL   time.Duration
	limit     int            // 0 unless WithLimit
	limitWait time.Duration  // WithLimitWait's; 0 unless WithLimit
	do        []lock.Option  // lock.Do's options; with a limit, do[waitAt] is the wait, set per task
	waits     bool           // WithLockOptions asked for a wait on a busy key
	waitAt    int            // the index of a limit's wait in do
	heartbeat lock.Heartbeat // WithLockOptions' heartbeat, which a traced delivery's extends
	drops     dropLog        // tasks dropped, for Logger
	tracing   tracing        // the tracer of the deliveries' spans
}

// untilLimitWaitEnds is the retry schedule of a limit's wait: attempts
// until the wait ends, at most lockdriver.QueuedPollInterval apart.
var untilLimitWaitEnds = lock.Retry{MaxRetries: math.MaxInt32, MaxDelay: lockdriver.QueuedPollInterval}

// New returns a Guard that locks tasks on b. A nil backend or a bad option
// is refused with an InvalidArgument *lock.Error.
func New(b lock.Backend, opts ...Option) (*Guard, error) {
	c, recorder, err := newConfig(b, opts)
	if err != nil {
		return nil, err
	}
	keyFunc := c.keyFunc
	switch {
	case keyFunc != nil:
	case c.limitSet:
		keyFunc = TypeKey
	default:
		keyFunc = DefaultKey
	}
	g := &Guard{
		b:        b,
		recorder: recorder,
		keyFunc:  keyFunc,
		prefix:   c.prefix,
		ttl:      c.ttl,
		policy:   c.policy,
		doneTTL:  c.doneTTL,
		limit:    c.limit,
	}
	g.tracing.tp = c.tracerProvider
	g.do = []lock.Option{
		// One attempt: a busy key is the policy's business, not a wait
		// that would hold a worker. A limit's tasks wait for a slot by time.
		lock.WithWait(0),
		lock.WithReleaseTimeout(ReleaseTimeout),
	}
	g.do = append(g.do, c.lockOpts...)
	// The Guard's own settings come after WithLockOptions, so they win.
	g.do = append(g.do, lock.WithTTL(c.ttl), lock.WithReleaseErrorHandler(c.onRelease))
	if c.limitSet {
		g.limitWait = c.limitWait
		g.waitAt = len(g.do)
		g.do = append(g.do, lock.WithWait(0), lock.WithRetry(untilLimitWaitEnds), lock.WithLimit(c.limit))
	}
	g.do = append(g.do, lock.WithReleaseFunc(g.release))
	if s, err := lock.Resolve(b, g.do...); err == nil {
		g.waits = s.Wait > 0
		g.heartbeat = s.Heartbeat
	}
	return g, nil
}

// Middleware returns the Guard as an asynq.MiddlewareFunc, for
// (*asynq.ServeMux).Use.
func (g *Guard) Middleware() asynq.MiddlewareFunc { return g.Wrap }

// Wrap returns a handler that runs h under the lock on the task's key. Its
// context carries the lease and ends if the lease is lost. A busy key
// fails the task with a *DuplicateError or *LimitError, an invalid key
// with ErrInvalidKey. It panics if h is nil. docs/asynq.md lists every
// outcome.
//
// Each delivery is a span of kind CONSUMER, "process <queue>", that
// continues the trace whose context the task's headers carry (see
// Enqueue); the lock's spans and h's work are its children. With no
// TracerProvider set there is no span. docs/opentelemetry.md has the
// details.
func (g *Guard) Wrap(h asynq.Handler) asynq.Handler {
	if h == nil {
		panic("asynqlock: Wrap of a nil handler")
	}
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		var d delivery
		ctx, d.span = g.startDelivery(ctx, t)
		if d.span != nil {
			defer endIfPanicked(&d)
		}
		err := g.process(ctx, h, t, &d)
		endDelivery(&d, err)
		g.drops.add(ctx, err)
		return err
	})
}

// process runs h through lock.Do: one attempt, the done check, and a
// release that marks the key done after a successful run. With a done
// window the attempt is the Recorder's AcquireDone, which checks the
// marker in the same step; on a Recorder without it, the check runs
// while holding.
// What it learns of the delivery goes to d.
func (g *Guard) process(ctx context.Context, h asynq.Handler, t *asynq.Task, d *delivery) error {
	key, err := g.key(ctx, t)
	if err != nil {
		return err
	}
	d.key = key
	opts := g.do
	wait := g.waitFor(ctx)
	var start time.Time
	if wait > 0 {
		opts = slices.Clone(g.do)
		opts[g.waitAt] = lock.WithWait(wait)
		start = time.Now()
	}
	if d.span != nil && d.span.IsRecording() {
		opts = append(opts[:len(opts):len(opts)], lock.WithHeartbeat(g.tracedHeartbeat(d.span)))
	}
	checked := false // the done check ran with the acquisition
	if g.recorder != nil {
		l, done, err := g.recorder.AcquireDone(ctx, key, g.ttl)
		switch {
		case err == nil && done:
			return &DuplicateError{Done: true, Dropped: true}
		case err == nil:
			opts, checked = append(opts[:len(opts):len(opts)], lock.WithLease(l)), true
		case errors.Is(err, errors.ErrUnsupported),
			g.waits && (errors.Is(err, lock.ErrLocked) || lock.CodeOf(err).Transient()):
			// lock.Do acquires (waiting, as WithLockOptions asked), and
			// the done check runs while holding.
		default:
			return g.notAcquired(ctx, key, err, 0, true)
		}
	}
	err = lock.Do(ctx, g.b, key, func(held context.Context, l lock.Lease) error {
		d.ran, d.fence = true, l.Fence
		if g.recorder != nil && !checked {
			done, err := g.recorder.IsDone(held, key)
			if err != nil {
				return fmt.Errorf("asynqlock: done check: %w", err)
			}
			if done {
				return &DuplicateError{Done: true, Dropped: true}
			}
		}
		return g.runTask(held, h, t)
	}, opts...)
	switch {
	case err == nil:
		return nil
	case !d.ran:
		var waited time.Duration
		if wait > 0 {
			waited = time.Since(start)
		}
		return g.notAcquired(ctx, key, err, waited, false)
	case errors.Is(err, lock.ErrLeaseLost):
		return fmt.Errorf("asynqlock: %w", err)
	}
	return err
}

// waitFor returns how long a task with context ctx waits for a slot: the
// limit's wait, but at most half the time left before ctx's deadline, so
// that the work keeps the other half. 0 means a single attempt.
func (g *Guard) waitFor(ctx context.Context) time.Duration {
	w := g.limitWait
	if dl, ok := ctx.Deadline(); ok && w > 0 {
		w = min(w, time.Until(dl)/2)
	}
	if w < time.Millisecond {
		return 0
	}
	return w
}

// release ends the lease for lock.Do: with the done marker after a
// successful run, plainly otherwise.
func (g *Guard) release(ctx context.Context, l lock.Lease, outcome error) error {
	if outcome == nil && g.recorder != nil {
		return g.recorder.ReleaseDone(ctx, l, g.doneTTL)
	}
	return g.b.Release(ctx, l.ID)
}

// notAcquired translates a failed acquisition, after waiting for waited,
// into the task's error; checked: the acquisition found no done marker.
func (g *Guard) notAcquired(ctx context.Context, key string, err error, waited time.Duration, checked bool) error {
	var le *lock.LockedError
	switch {
	case errors.As(err, &le):
		// A busy key with a live done marker is held by a duplicate on its
		// way out: drop this one too. A marker is proof of a successful run
		// even without the lock; only its absence needs the lock.
		if g.recorder != nil && g.policy == Requeue && !checked {
			if done, derr := g.recorder.IsDone(ctx, key); derr == nil && done {
				return &DuplicateError{Done: true, Dropped: true}
			}
		}
		exp := le.ExpiresAt
		if exp.IsZero() {
			exp = time.Now().Add(g.ttl)
		}
		if g.limit > 0 {
			return &LimitError{Limit: g.limit, ExpiresAt: exp, Waited: waited, Dropped: g.policy == Drop}
		}
		return &DuplicateError{ExpiresAt: exp, Dropped: g.policy == Drop}
	case errors.Is(err, lock.ErrKindMismatch), errors.Is(err, errors.ErrUnsupported):
		// A key used both as a lock and as a limit, or a backend without
		// limits: a mistake in the program that no retry mends.
		return fmt.Errorf("asynqlock: acquire: %w: %w", err, asynq.SkipRetry)
	case lock.CodeOf(err) == lock.CodeInvalidArgument:
		// The backend's own key rules, checked before any I/O.
		return invalidKey(err)
	}
	return fmt.Errorf("asynqlock: acquire: %w", err)
}

func logReleaseError(l lock.Lease, err error) {
	slog.Warn("asynqlock: release failed; tried again in the background if the failure was transient, else the lease ends at its TTL",
		"key_hash", lockdriver.HashKey(l.Key), "fence", string(l.Fence), "error", err)
}
