package lock

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/internal/cleanup"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Acquire takes the lock on key from b, retrying while the key is busy:
// exponential backoff from the base delay with jitter, every delay clamped
// to the time left of the wait ([WithWait]), at most [Retry.MaxRetries]
// retries (see [WithRetry]). Every wait ends at once when ctx is done.
//
// When b is an [IDBackend] (redisbackend is) and the wait is not zero, the
// caller waits in the backend's queue of the key: every attempt is
// Waiter.Attempt (which, when the key is busy, takes or keeps the caller's
// place in the queue), and a release hands the lock to the oldest waiter
// (redisbackend may first serve the waiters of the process that holds it,
// for a bounded time: its Options.HandOffLocality), which Acquire returns
// as soon as it arrives. A queued caller attempts
// again only as a fallback (a holder whose lease expires without a
// release, a lost message): once the holder's lease has expired, or
// lockdriver.QueuedPollInterval (1s) after its last attempt, whichever comes first, not
// on the backoff schedule; and Acquire always leaves the queue on its way
// out. Without a queue Acquire polls on the backoff schedule.
//
// With an IDBackend, every attempt uses one lock
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

func (c *config) acquire(ctx context.Context, b Backend, key string) (Lease, error) {
	if ctx == nil {
		return Lease{}, invalid("acquire", "nil context")
	}
	if b == nil {
		return Lease{}, invalid("acquire", "nil backend")
	}
	if _, ok := b.(hookChain); !ok {
		return c.acquireOn(ctx, b, key, false)
	}
	// The whole acquisition is an OpWait of b's hooks.
	op := &Op{Kind: OpWait, Key: key, TTL: c.ttl}
	if c.limitSet {
		op.Limit = int(c.limit)
	}
	return waitOp(ctx, b, op, func(ctx context.Context) (Lease, error) {
		return c.acquireOn(ctx, b, key, true)
	})
}

// waitOp runs acquire, a whole acquisition, as the OpWait op through b's
// hooks and returns the lease it got.
func waitOp(ctx context.Context, b Backend, op *Op, acquire func(context.Context) (Lease, error)) (Lease, error) {
	err := Emit(ctx, b, op, func(ctx context.Context, op *Op) (err error) {
		op.Lease, err = acquire(ctx)
		return err
	})
	switch {
	case err != nil:
		return Lease{}, err
	case op.Lease.ID == "":
		return Lease{}, newError(CodeInternal, "acquire", "a hook returned from OpWait without running the acquisition", nil)
	}
	return op.Lease, nil
}

// acquireOn is Acquire; hooked reports whether b has hooks to tell the
// events of the wait.
func (c *config) acquireOn(ctx context.Context, b Backend, key string, hooked bool) (l Lease, err error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, aborted(err)
	}
	a := &acquisition{c: c, b: b, key: key, hooked: hooked, deadline: time.Now().Add(c.wait)}
	if c.watch != nil || c.wait > maxQueueWait {
		a.w = new(longWait)
		if c.watch != nil {
			a.w.watch = *c.watch
		}
	}
	defer func() { a.finish(ctx, err) }()
	if err := a.start(); err != nil {
		return Lease{}, err
	}
	return a.run(ctx)
}

// acquisition is one wait for a key: that of Acquire, Do and Hold, and of
// lock/election's candidates (WithWatch). It holds how it attempts, its
// place in the backend's queue, and its schedule.
type acquisition struct {
	c        *config
	b        Backend
	key      string
	deadline time.Time // the end of the wait
	hooked   bool      // b has hooks: tell them OpRetry and OpGranted
	unknown  bool      // see idUses

	try func(ctx context.Context) (Lease, error)
	id  string // the lock id of every attempt; "" when b picks one per attempt
	qw  Waiter // the caller's place in b's queue of key; nil when it does not queue
	// idUses counts the attempts made with id. unknown is set once an
	// attempt failed without telling whether it took the lock (a lost
	// reply): unless a later attempt with the same id gets the lease back,
	// that id is released on the way out.
	idUses int

	timer   *time.Timer
	timerAt time.Time // when the pending timer fires; zero when none is pending
	waits   int       // backoff timers started: the index into the delay schedule
	retries int       // attempts counted against retry.MaxRetries
	w       *longWait // with a Watch or a wait over maxQueueWait; nil else
}

// longWait is what a wait with a Watch, or longer than maxQueueWait,
// keeps: its next new place in the queue (rejoin), and with a Watch the
// transient failures in a row and the holder's expiry as the last attempt
// found it.
type longWait struct {
	watch     Watch // WithWatch's, or nil
	rejoin    *time.Timer
	failures  int
	holderExp time.Time
}

// start picks the attempt function and lock id, and joins the queue: for
// the wait, or for maxQueueWait at a time when the wait is longer.
func (a *acquisition) start() error {
	try, id, err := a.c.attempter(a.b, a.key)
	if err != nil {
		return err
	}
	a.try, a.id, a.idUses, a.unknown = try, id, 0, false
	if a.qw, err = joinQueue(a.b, a.key, id, a.c); err != nil {
		return err
	}
	if a.qw == nil {
		return nil
	}
	a.try = a.qw.Attempt
	if a.c.wait > maxQueueWait {
		if a.w.rejoin == nil {
			a.w.rejoin = time.NewTimer(maxQueueWait)
		} else {
			a.w.rejoin.Reset(maxQueueWait)
		}
	}
	return nil
}

// renew gives up the place in the queue and starts again with a new lock
// id, for an id that takes nothing any more or a place whose time is up.
func (a *acquisition) renew(ctx context.Context) error {
	a.leave(ctx, false)
	return a.start()
}

// finish leaves the queue, or releases an id whose outcome is unknown,
// and stops the timers.
func (a *acquisition) finish(ctx context.Context, err error) {
	a.leave(ctx, err == nil)
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.w != nil && a.w.rejoin != nil {
		a.w.rejoin.Stop()
	}
}

// run attempts until one succeeds, a hand-off arrives, or the call gives
// up.
func (a *acquisition) run(ctx context.Context) (Lease, error) {
	for attempt := 1; ; attempt++ {
		a.idUses++
		l, err := a.try(ctx)
		if err == nil {
			return l, nil
		}
		renewed, ferr := a.judge(ctx, attempt, err)
		switch {
		case ferr != nil:
			return Lease{}, ferr
		case renewed:
			continue // at once, with the new id
		}
		l, err = a.wait(ctx, attempt, err)
		switch {
		case errors.Is(err, errRejoin):
			if err := a.renew(ctx); err != nil {
				return Lease{}, err
			}
		case err != nil || l.ID != "":
			return l, err
		}
	}
}

// errRejoin asks run for a new place in the queue.
var errRejoin = errors.New("lock: join the queue again")

// judge decides what follows failed attempt number attempt: an error to
// return (final), an attempt at once with a new id (renewed), or neither:
// a wait, after contention or a transient failure.
func (a *acquisition) judge(ctx context.Context, attempt int, err error) (renewed bool, final error) {
	locked := errors.Is(err, ErrLocked)
	if !locked {
		if a.id != "" && a.idUses > 1 && errors.Is(err, ErrNotHeld) {
			// The id was released since its last attempt (an attempt gave
			// its grant up, as ReplicaAck does): it holds nothing and takes
			// nothing any more. Try again at once with a new one; that
			// attempt's outcome is the one to report.
			a.unknown = false // released: nothing to release on the way out
			if serr := a.renew(ctx); serr != nil {
				return false, serr
			}
			a.observe(ctx, attempt, err, 0)
			return true, nil
		}
		a.unknown = a.unknown || outcomeUnknown(err)
		// With one id for every attempt, a transient failure is retried
		// like contention: an attempt that did take the lock gets it back.
		// Without, a retry could leave a lock nobody can release, so only
		// a watching wait, which never gives up, retries.
		if (a.id == "" && a.c.watch == nil) || !transient(err) || ctx.Err() != nil {
			a.observe(ctx, attempt, err, 0)
			return false, err
		}
	}
	if a.retries >= a.c.retry.MaxRetries || time.Until(a.deadline) <= 0 {
		a.observe(ctx, attempt, err, 0)
		if !locked {
			return false, err
		}
		return false, newError(CodeAcquisitionTimeout, "acquire",
			"key still locked after "+itoa(attempt)+" attempts", err)
	}
	return false, nil
}

// wait waits after failed attempt number attempt (err) for a hand-off
// (when queued), a change of holder (with a Watch), the timer or the end
// of ctx. It returns a handed-over lease, or a zero Lease for another
// attempt: when the timer fired (a retry used up), or the backend or the
// Watch asked for one (no retry used up); errRejoin for a new place.
func (a *acquisition) wait(ctx context.Context, attempt int, err error) (Lease, error) {
	d := a.schedule(err)
	a.observe(ctx, attempt, err, d)
	var granted <-chan Lease
	if a.qw != nil {
		granted = a.qw.Granted()
	}
	var changed <-chan struct{}
	if a.c.watch != nil {
		changed = a.w.watch.Changed()
	}
	var rejoin <-chan time.Time
	if a.w != nil && a.w.rejoin != nil {
		rejoin = a.w.rejoin.C
	}
	for {
		select {
		case g := <-granted:
			a.granted(ctx, g)
			return g, nil
		case <-changed:
			if a.woken() {
				return Lease{}, nil
			}
		case <-rejoin:
			return Lease{}, errRejoin
		case <-ctx.Done():
			return Lease{}, aborted(ctx.Err())
		case <-a.timer.C:
			a.timerAt = time.Time{}
			a.retries++
			return Lease{}, nil
		}
	}
}

// granted tells b's hooks of a lease a release handed to the waiter.
func (a *acquisition) granted(ctx context.Context, g Lease) {
	if !a.hooked || g.ID == "" {
		return
	}
	op := &Op{Kind: OpGranted, Key: a.key, ID: g.ID, TTL: g.TTL, Lease: g}
	if a.c.limitSet {
		op.Limit = int(a.c.limit)
	}
	_ = Emit(ctx, a.b, op, nil)
}

// schedule starts the timer of the next attempt after err and returns the
// time until it fires. Without a Watch a pending timer is kept (a
// hand-off request does not restart it), and the delay is the next
// backoff delay within the wait; for a queued waiter after contention, no
// sooner than its fallback (queuedPoll). With a Watch the delay is until
// the holder's expiry after contention, the backoff after a transient
// failure.
func (a *acquisition) schedule(err error) time.Duration {
	locked := errors.Is(err, ErrLocked)
	var d time.Duration
	switch {
	case a.c.watch != nil && locked:
		a.w.failures, a.w.holderExp = 0, lockedUntil(err)
		d = a.until()
	case a.c.watch != nil:
		d = a.c.retry.delay(a.w.failures)
		a.w.failures++
	case !a.timerAt.IsZero():
		return max(time.Until(a.timerAt), 0)
	case a.qw != nil && locked:
		// Never sooner than the backoff schedule either: a caller that
		// asked for long delays keeps them.
		d = max(queuedPoll(err, time.Now(), a.c.limitSet), a.c.retry.delay(a.waits))
	default:
		d = a.c.retry.delay(a.waits)
	}
	a.waits++
	d = min(d, time.Until(a.deadline))
	a.resetTimer(d)
	return d
}

// resetTimer makes the attempt timer fire in d.
func (a *acquisition) resetTimer(d time.Duration) {
	if a.timer == nil {
		a.timer = time.NewTimer(d)
	} else {
		a.timer.Reset(d)
	}
	a.timerAt = time.Now().Add(d)
}

// observe tells b's hooks, if any, of a failed attempt (OpRetry).
func (a *acquisition) observe(ctx context.Context, attempt int, err error, wait time.Duration) {
	if a.hooked {
		_ = Emit(ctx, a.b, &Op{Kind: OpRetry, Key: a.key, ID: a.id, Attempt: attempt, Err: err, Wait: wait}, nil)
	}
}

// joinQueue returns the waiter of id in b's queue of key when b is an
// [IDBackend] that can queue it and the call may wait; else nil.
func joinQueue(b Backend, key, id string, c *config) (Waiter, error) {
	q, ok := b.(IDBackend)
	if !ok || id == "" || c.wait <= 0 {
		return nil, nil
	}
	n := 0
	if c.limitSet {
		n = int(c.limit)
	}
	w, err := q.Join(key, id, n, c.ttl, min(c.wait, maxQueueWait))
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, nil // this instance cannot be told of hand-offs: poll
	case err != nil:
		return nil, err
	}
	return w, nil
}

// attempter returns the function that makes one acquisition attempt on b:
// a slot's with [WithLimit] (b must be an [IDBackend]); else with one lock
// id for every attempt when b is an IDBackend (id is that id), else
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
			return nil, "", err
		}
		n := int(c.limit)
		return func(ctx context.Context) (Lease, error) { return lim.AcquireSlot(ctx, key, id, n, ttl) }, id, nil
	}
	if ib, ok := b.(IDBackend); ok {
		id, err := ib.NewLockID(key)
		if err != nil {
			return nil, "", err
		}
		return func(ctx context.Context) (Lease, error) { return ib.AcquireID(ctx, key, id, ttl) }, id, nil
	}
	return func(ctx context.Context) (Lease, error) { return b.Acquire(ctx, key, ttl) }, "", nil
}

// transient reports whether err is a failure worth another attempt: the
// store was unreachable, slow or busy.
func transient(err error) bool { return CodeOf(err).Transient() }

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

// maxQueueWait bounds how long a waiter keeps one place (one lock id) in
// the key's queue: a longer wait joins again with a new id when it ends,
// so that a place left by a crashed process expires.
const maxQueueWait = 10 * time.Minute

// leaveTimeout bounds how long the end of a wait waits for the backend:
// to leave the queue, which hands on a lease granted as the wait gave up,
// or to release an id whose attempt's outcome is unknown. What it cuts
// short goes on in the background.
const leaveTimeout = time.Second

// leave gives up the place in the queue (took: the caller has its lease),
// or releases an id whose outcome is unknown, before it returns, within
// leaveTimeout and ctx's deadline.
func (a *acquisition) leave(ctx context.Context, took bool) {
	qw := a.qw
	a.qw = nil
	if qw != nil && took {
		qw.Leave(true)
		return
	}
	if qw == nil && (took || !a.unknown || a.id == "") {
		return
	}
	deadline := time.Now().Add(leaveTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	if qw != nil {
		if lw, ok := qw.(interface{ LeaveWait(context.Context) error }); ok {
			_ = lw.LeaveWait(lctx)
		} else {
			qw.Leave(false)
		}
		return
	}
	if err := a.b.Release(lctx, a.id); err != nil && transient(err) {
		go releaseOrphan(context.WithoutCancel(ctx), a.b, a.id, max(a.c.releaseTimeout, a.c.ttl))
	}
}

// releaseOrphan releases the lease id that an attempt whose reply never
// came may have taken, trying again after transient errors for up to
// timeout (the lease's TTL, after which the lock is gone anyway, or the
// release timeout if longer). A lease that was never granted is not found,
// which is fine; and the release retires id, so a copy of the attempt
// still in flight takes nothing (see IDBackend).
func releaseOrphan(ctx context.Context, b Backend, id string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cleanup.Retry(ctx, func(ctx context.Context) error { return b.Release(ctx, id) }, transient)
}

// minQueuedPoll keeps a queued waiter from spinning on a holder whose
// expiry is already past by the local clock (clocks differ).
const minQueuedPoll = 50 * time.Millisecond

// queuedPoll is the wait of a queued waiter after contention err at now:
// until just after the holder's lease (err's *LockedError) has ended,
// within [minQueuedPoll, contract.QueuedPollInterval]. A lock's lease ends at its
// expiry (the store drops it then); a slot of a limit counts as live for
// the time tolerance after its expiry (slot is true).
func queuedPoll(err error, now time.Time, slot bool) time.Duration {
	var le *LockedError
	if !errors.As(err, &le) || le.ExpiresAt.IsZero() {
		return contract.QueuedPollInterval
	}
	d := le.ExpiresAt.Sub(now) + minQueuedPoll
	if slot {
		d += contract.TimeTolerance
	}
	return min(max(d, minQueuedPoll), contract.QueuedPollInterval)
}

func aborted(err error) *Error {
	return newError(CodeAborted, "acquire", "context done", err)
}
