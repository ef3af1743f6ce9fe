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
	limit     int           // 0 unless WithLimit
	limitWait time.Duration // WithLimitWait's; 0 unless WithLimit
	do        []lock.Option // lock.Do's options; with a limit, do[waitAt] is the wait, set per task
	waitAt    int           // the index of a limit's wait in do
	drops     dropLog       // tasks dropped, for Logger
}

// untilLimitWaitEnds is the retry schedule of a limit's wait: attempts
// until the wait ends (it is bounded by time, not by a count of attempts),
// at most lockdriver.QueuedPollInterval apart.
var untilLimitWaitEnds = lock.Retry{MaxRetries: math.MaxInt32, MaxDelay: lockdriver.QueuedPollInterval}

// New returns a Guard that locks tasks on b. It returns an *lock.Error with
// lock.CodeInvalidArgument (Op "config") for a nil backend or a bad option,
// including WithDoneTTL on a backend that does not implement
// lock.Recorder, WithLimit on one that does not implement lock.IDBackend
// (the error then also matches errors.ErrUnsupported), and WithLimit with
// WithDoneTTL.
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
	g.do = []lock.Option{
		// One attempt: a busy key is the policy's business, not a wait
		// that would hold an asynq worker (a lock.WithWait given with
		// WithLockOptions asks for one). A limit's tasks wait for a slot
		// instead (see waitFor), by time, not by a count of attempts.
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
	return g, nil
}

// Middleware returns the Guard as an asynq.MiddlewareFunc, for
// (*asynq.ServeMux).Use.
func (g *Guard) Middleware() asynq.MiddlewareFunc { return g.Wrap }

// Wrap returns a handler that runs h under the lock on the task's key:
//
//   - The key comes from the KeyFunc and the prefix. A key that cannot be
//     derived or is invalid fails the task with an error matching
//     ErrInvalidKey and asynq.SkipRetry (archived), without a backend call.
//   - A busy key fails the task with a *DuplicateError (with WithLimit:
//     every slot taken, and none freed within WithLimitWait's wait, a
//     *LimitError): retried under policy Requeue,
//     removed (asynq.RevokeTask) under Drop. asynq logs a warning for
//     every task removed so, unless its Config.Logger comes from the
//     Guard's Logger method.
//   - A key held as the other kind (a lock where the Guard wants a limit,
//     or the reverse: lock.ErrKindMismatch), or a backend that turns out
//     to have no limits, fails the task with asynq.SkipRetry (archived).
//   - With WithDoneTTL, a key marked done is removed likewise without
//     running h, and a successful run marks its key done as it releases.
//   - Any other backend failure returns a retryable error wrapping the
//     backend's (see lock.CodeOf); h never runs without the lock.
//   - While h runs the lease is kept alive (lock.Keep); its context carries
//     the lease (lock.LeaseFrom) and is cancelled with a cause matching
//     lock.ErrLeaseLost when the lease is lost. The task then fails with an
//     error matching lock.ErrLeaseLost (and h's error, if any), so asynq
//     retries it, even if h returned nil.
//   - The lease is released when h returns or panics (the panic goes on to
//     asynq), under a context of its own bounded by ReleaseTimeout.
//
// Otherwise the task's result is h's error unchanged. Wrap panics if h is
// nil.
func (g *Guard) Wrap(h asynq.Handler) asynq.Handler {
	if h == nil {
		panic("asynqlock: Wrap of a nil handler")
	}
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		err := g.process(ctx, h, t)
		g.drops.add(ctx, err)
		return err
	})
}

// process runs h through lock.Do: one acquisition attempt, the done check
// while holding, and a release that marks the key done after a successful
// run (ReleaseDone, in the same script as the release).
func (g *Guard) process(ctx context.Context, h asynq.Handler, t *asynq.Task) error {
	key, err := g.key(ctx, t)
	if err != nil {
		return err
	}
	ran := false
	opts := g.do
	wait := g.waitFor(ctx)
	var start time.Time
	if wait > 0 {
		opts = slices.Clone(g.do)
		opts[g.waitAt] = lock.WithWait(wait)
		start = time.Now()
	}
	err = lock.Do(ctx, g.b, key, func(held context.Context, _ lock.Lease) error {
		ran = true
		if g.recorder != nil {
			done, err := g.recorder.IsDone(held, key)
			if err != nil {
				return fmt.Errorf("asynqlock: done check: %w", err)
			}
			if done {
				return &DuplicateError{Done: true, Dropped: true}
			}
		}
		return h.ProcessTask(held, t)
	}, opts...)
	switch {
	case err == nil:
		return nil
	case !ran:
		var waited time.Duration
		if wait > 0 {
			waited = time.Since(start)
		}
		return g.notAcquired(ctx, key, err, waited)
	case errors.Is(err, lock.ErrLeaseLost):
		return fmt.Errorf("asynqlock: %w", err)
	}
	return err
}

// waitFor returns how long a task with context ctx waits for a slot of
// its full limit: the limit's wait, but at most half the time left before
// ctx's deadline (asynq's deadline of the task), so that the work keeps
// the other half; 0 (a single attempt) without a limit, or when less than
// a millisecond would be left to wait.
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
// into the task's error.
func (g *Guard) notAcquired(ctx context.Context, key string, err error, waited time.Duration) error {
	var le *lock.LockedError
	switch {
	case errors.As(err, &le):
		// A busy key with a live done marker is held by another duplicate
		// on its way out: drop this one too rather than requeue it. (A
		// marker seen without holding the key is still proof of a
		// successful run; only its absence needs the lock to be sure.)
		if g.recorder != nil && g.policy == Requeue {
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
		// A key used both as a lock and as a limit (a deduplicating and a
		// limiting Guard given the same prefix and key), or a decorating
		// backend whose backend has no limits: a mistake in the program,
		// not in the task's key, and not one a retry mends.
		return fmt.Errorf("asynqlock: acquire: %w: %w", err, asynq.SkipRetry)
	case lock.CodeOf(err) == lock.CodeInvalidArgument:
		// The backend's own key rules (such as reserved prefixes), checked
		// before any I/O: retrying cannot help.
		return invalidKey(err)
	}
	return fmt.Errorf("asynqlock: acquire: %w", err)
}

func logReleaseError(l lock.Lease, err error) {
	slog.Warn("asynqlock: release failed; tried again in the background if the failure was transient, else the lease ends at its TTL",
		"key_hash", lockdriver.HashKey(l.Key), "fence", string(l.Fence), "error", err)
}
