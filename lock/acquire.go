package lock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/syncguard-go/syncguard/internal/cleanup"
)

// Acquire takes the lock on key from b, retrying while the key is busy:
// exponential backoff from the base delay with jitter, every delay clamped
// to the time left of the wait ([WithWait]), at most MaxRetries retries
// (see [Option]). Every wait ends at once when ctx is done.
//
// When b is a [Queuer] (redisbackend is) and the wait is not zero, the
// caller waits in the backend's queue of the key: every attempt is
// Waiter.Attempt (which, when the key is busy, takes or keeps the caller's
// place in the queue), and a release hands the lock to the oldest waiter,
// which Acquire returns as soon as it arrives. A queued caller attempts
// again only as a fallback (a holder whose lease expires without a
// release, a lost message): once the holder's lease has expired, or
// [QueuedPollInterval] after its last attempt, whichever comes first, not
// on the backoff schedule; and Acquire always leaves the queue on its way
// out. Otherwise, when b is a [Notifier], a release of key wakes the
// waiter early: on the
// first contention Acquire watches the key and tries once more at once
// (that re-check closes the gap between the failed attempt and the watch
// and does not count as a retry), then waits for a wake-up, the backoff
// timer or ctx, whichever comes first. An attempt brought by a wake-up
// does not count against MaxRetries (it follows a release; the wait
// still bounds the whole of it) and does not restart the backoff timer,
// which keeps its schedule as the polling fallback for a holder whose
// lease expires without a release, and the wait still bounds the whole
// of it. Without a Notifier Acquire only polls.
//
// When b is an [IDAcquirer] (redisbackend is), every attempt uses one lock
// id, so an attempt whose reply was lost is picked up by the next one
// (which gets that lease back) instead of leaving an orphaned lock; such a
// backend's transient failures (CodeNetworkTimeout,
// CodeServiceUnavailable, CodeRateLimited) are then retried like
// contention, and when Acquire gives up after one of them it releases the
// id in the background (for up to the lease's TTL).
//
// Errors: an [*Error] with [CodeAcquisitionTimeout] that also matches
// [ErrLocked] (and unwraps to the last [*LockedError]) when it gives up on
// a busy key; [CodeAborted] matching ctx.Err() when ctx ends between
// attempts (an attempt cut short by ctx returns the backend's error, such
// as CodeNetworkTimeout, which also matches ctx.Err()); [CodeInvalidArgument]
// for bad options; other system errors from the backend are returned at
// once (transient ones after the retries above).
func Acquire(ctx context.Context, b Backend, key string, opts ...Option) (Lease, error) {
	c, err := newConfig(opts)
	if err != nil {
		return Lease{}, err
	}
	return c.acquire(ctx, b, key)
}

func (c *config) acquire(ctx context.Context, b Backend, key string) (l Lease, err error) {
	if ctx == nil {
		return Lease{}, invalid("acquire", "nil context")
	}
	if b == nil {
		return Lease{}, invalid("acquire", "nil backend")
	}
	ctx, obs := observeAcquire(ctx, b, key)
	if obs != nil {
		defer func() { obs.Done(l, err) }()
	}
	if err := ctx.Err(); err != nil {
		return Lease{}, aborted(err)
	}
	try, id, err := c.attempter(b, key)
	if err != nil {
		return Lease{}, err
	}
	// unknown is set once an attempt failed without telling whether it
	// took the lock (a lost reply): unless a later attempt with the same id
	// gets the lease back, that id is released on the way out.
	unknown := false
	// qw is the caller's place in the backend's queue of the key, when b
	// is a Queuer and the call may wait; its Leave releases whatever the
	// id holds if the call fails, which covers unknown outcomes too.
	qw, err := joinQueue(b, key, id, c)
	if err != nil {
		return Lease{}, err
	}
	defer func() {
		switch {
		case qw != nil:
			qw.Leave(err == nil)
		case err != nil && unknown && id != "":
			go releaseOrphan(context.WithoutCancel(ctx), b, id, max(c.releaseTimeout, c.ttl))
		}
	}()
	if qw != nil {
		try = qw.Attempt
	}
	deadline := time.Now().Add(c.wait)
	var notifier Notifier
	if qw == nil {
		notifier, _ = b.(Notifier)
	}
	var (
		timer   *time.Timer
		timerAt time.Time // when the pending backoff timer fires; zero when none is pending
		waits   int       // backoff timers started: the index into the delay schedule
		retries int       // attempts counted against maxRetries
		watch   <-chan struct{}
		unwatch func() // nil until the first watch
	)
	defer func() {
		if unwatch != nil {
			unwatch()
		}
	}()
	idUses := 0 // attempts made with id
	for attempt := 1; ; attempt++ {
		idUses++
		l, err := try(ctx)
		if err == nil {
			return l, nil
		}
		if c.limitSet && errors.Is(err, errors.ErrUnsupported) && CodeOf(err) == "" {
			// A decorator of a backend without limits (see Limiter).
			return Lease{}, errNoLimits()
		}
		locked := errors.Is(err, ErrLocked)
		if !locked {
			if id != "" && idUses > 1 && errors.Is(err, ErrNotHeld) {
				// The id was released since its last attempt (an attempt
				// gave its grant up, as ReplicaAck does): it holds nothing
				// and takes nothing any more. Try again at once with a new
				// one; that attempt's outcome is the one to report.
				var aerr error
				if try, id, aerr = c.attempter(b, key); aerr != nil {
					return Lease{}, aerr
				}
				if qw != nil {
					qw.Leave(false)
					if qw, aerr = joinQueue(b, key, id, c); aerr != nil {
						return Lease{}, aerr
					}
					if qw != nil {
						try = qw.Attempt
					}
				}
				unknown, idUses = false, 0
				if obs != nil {
					obs.Attempt(attempt, err, 0)
				}
				continue
			}
			unknown = unknown || outcomeUnknown(err)
			// With one id for every attempt, a transient failure is retried
			// like contention: an attempt that did take the lock gets it
			// back. Without, a retry could take a second lock.
			if id == "" || !transient(err) || ctx.Err() != nil {
				if obs != nil {
					obs.Attempt(attempt, err, 0)
				}
				return Lease{}, err
			}
		}
		left := time.Until(deadline)
		if retries >= c.maxRetries || left <= 0 {
			if obs != nil {
				obs.Attempt(attempt, err, 0)
			}
			if !locked {
				return Lease{}, err
			}
			return Lease{}, newError(CodeAcquisitionTimeout, "acquire",
				"key still locked after "+itoa(attempt)+" attempts", err)
		}
		if locked && notifier != nil && unwatch == nil {
			watch, unwatch = watchKey(notifier, key)
			if watch != nil {
				// A release between the attempt above and the watch
				// published to nobody: look again before waiting.
				if obs != nil {
					obs.Attempt(attempt, err, 0)
				}
				continue
			}
		}
		var wait time.Duration // until the next attempt at the latest
		if timerAt.IsZero() {
			if qw != nil && locked {
				// Queued: the release hands the lock over (Granted); an
				// attempt is only the fallback for a hand-off that never
				// comes (a holder that dies, a lost message).
				wait = min(queuedPoll(err, time.Now()), left)
			} else {
				wait = min(c.delay(waits), left)
				waits++
			}
			if timer == nil {
				timer = time.NewTimer(wait)
				defer timer.Stop()
			} else {
				timer.Reset(wait)
			}
			timerAt = time.Now().Add(wait)
		} else {
			wait = max(time.Until(timerAt), 0)
		}
		if obs != nil {
			obs.Attempt(attempt, err, wait)
		}
		var granted <-chan Lease
		if qw != nil {
			granted = qw.Granted()
		}
		select {
		case g := <-granted:
			if g.ID != "" {
				// Handed over by a release: the lease is ours.
				return g, nil
			}
			// The backend asks for an attempt at once (hand-offs may have
			// been missed); like a wake-up, it uses up no retry.
		case <-ctx.Done():
			return Lease{}, aborted(ctx.Err())
		case <-timer.C:
			timerAt = time.Time{}
			retries++
		case <-watch:
			// A wake-up follows a release, so the attempt it brings does
			// not use up a retry (MaxRetries bounds polling; the wait
			// bounds everything). One-shot: watch again before the
			// attempt, so a release during it wakes us.
			unwatch()
			watch, unwatch = watchKey(notifier, key)
		}
	}
}

// joinQueue returns the waiter of id in b's queue of key when b is a
// [Queuer] (a [SlotQueuer] for a limit) that can queue it and the call may
// wait; else nil.
func joinQueue(b Backend, key, id string, c *config) (Waiter, error) {
	if id == "" || c.wait <= 0 {
		return nil, nil
	}
	var (
		w   Waiter
		err error
	)
	if c.limitSet {
		q, ok := b.(SlotQueuer)
		if !ok {
			return nil, nil
		}
		w, err = q.JoinSlot(key, id, c.limit, c.ttl, c.wait)
	} else {
		q, ok := b.(Queuer)
		if !ok {
			return nil, nil
		}
		w, err = q.Join(key, id, c.ttl, c.wait)
	}
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return nil, nil
		}
		return nil, err
	}
	return w, nil
}

// attempter returns the function that makes one acquisition attempt on b:
// a slot's with [WithLimit] (b must be a [Limiter]); else with one lock id
// for every attempt when b is an [IDAcquirer] (id is that id), else
// Backend.Acquire (id "").
func (c *config) attempter(b Backend, key string) (try func(ctx context.Context) (Lease, error), id string, err error) {
	ttl := c.ttl
	lim, err := c.limiter(b)
	if err != nil {
		return nil, "", err
	}
	if lim != nil {
		id, err := lim.NewLockID(key)
		if err != nil {
			if errors.Is(err, errors.ErrUnsupported) && CodeOf(err) == "" {
				return nil, "", errNoLimits()
			}
			return nil, "", err
		}
		n := c.limit
		return func(ctx context.Context) (Lease, error) { return lim.AcquireSlot(ctx, key, id, n, ttl) }, id, nil
	}
	if ia, ok := b.(IDAcquirer); ok {
		id, err := ia.NewLockID(key)
		switch {
		case err == nil:
			return func(ctx context.Context) (Lease, error) { return ia.AcquireID(ctx, key, id, ttl) }, id, nil
		case !errors.Is(err, errors.ErrUnsupported):
			return nil, "", err
		}
	}
	return func(ctx context.Context) (Lease, error) { return b.Acquire(ctx, key, ttl) }, "", nil
}

// transient reports whether err is a failure worth another attempt: the
// store was unreachable, slow or busy.
func transient(err error) bool {
	switch CodeOf(err) {
	case CodeNetworkTimeout, CodeServiceUnavailable, CodeRateLimited:
		return true
	}
	return false
}

// outcomeUnknown reports whether an attempt that failed with err may still
// have taken the lock: anything but contention, bad input, bad
// credentials and a call abandoned before it was sent.
func outcomeUnknown(err error) bool {
	switch CodeOf(err) {
	case CodeInvalidArgument, CodeAuthFailed, CodeAborted:
		return false
	}
	return !errors.Is(err, ErrLocked)
}

// releaseOrphan releases the lease id that an attempt whose reply never
// came may have taken, trying again after transient errors for up to
// timeout (the lease's TTL, after which the lock is gone anyway, or the
// release timeout if longer). A lease that was never granted is not found,
// which is fine; and the release retires id, so a copy of the attempt
// still in flight takes nothing (see IDAcquirer).
func releaseOrphan(ctx context.Context, b Backend, id string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cleanup.Retry(ctx, func(ctx context.Context) error { return b.Release(ctx, id) }, transient)
}

// watchKey calls n.WatchKey and guards against a nil cancel.
func watchKey(n Notifier, key string) (<-chan struct{}, func()) {
	ch, cancel := n.WatchKey(key)
	if cancel == nil {
		cancel = func() {}
	}
	return ch, cancel
}

// QueuedPollInterval is the longest a waiter in a backend's queue (see
// [Queuer]) goes without an attempt of its own: it is handed the lock by
// the release, and attempts only as a fallback, when the holder's lease
// has ended by its expiry (the hand-off a dead holder never makes) or
// QueuedPollInterval after its last attempt (a lost message), whichever
// comes first, however short the retry delays ([WithBaseDelay],
// [WithMaxDelay]).
const QueuedPollInterval = time.Second

// minQueuedPoll keeps a queued waiter from spinning on a holder whose
// expiry is already past by the local clock (clocks differ).
const minQueuedPoll = 50 * time.Millisecond

// queuedPoll is the wait of a queued waiter after contention err at now:
// until just after the holder's lease (err's *LockedError) expires, within
// [minQueuedPoll, QueuedPollInterval]. (The store drops an expired lease
// at its expiry; the time tolerance matters only to a lease read before
// the store dropped it.)
func queuedPoll(err error, now time.Time) time.Duration {
	var le *LockedError
	if !errors.As(err, &le) || le.ExpiresAt.IsZero() {
		return QueuedPollInterval
	}
	d := le.ExpiresAt.Sub(now) + minQueuedPoll
	return min(max(d, minQueuedPoll), QueuedPollInterval)
}

// delay is the wait after the given failed attempt (0-based).
func (c *config) delay(attempt int) time.Duration {
	d := c.baseDelay
	if c.backoff == BackoffExponential {
		for i := 0; i < attempt && d < time.Hour; i++ {
			d *= 2
		}
	}
	if c.maxDelay > 0 && d > c.maxDelay {
		d = c.maxDelay
	}
	if d <= 0 {
		return 0
	}
	switch c.jitter {
	case JitterEqual:
		d = d/2 + rand.N(d/2+1)
	case JitterFull:
		d = rand.N(d + 1)
	}
	return d
}

func aborted(err error) *Error {
	return newError(CodeAborted, "acquire", "context done", err)
}
