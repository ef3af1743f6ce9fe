package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/cleanup"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Acquire takes the lock on key from b, retrying while the key is busy,
// and returns its lease. It waits in the backend's queue when b is an
// [IDBackend], else polls with the backoff of [WithRetry], for at most
// the wait of [WithWait]. ctx's end ends the wait at once.
//
// When it gives up on a busy key, the error has [CodeAcquisitionTimeout]
// and matches [ErrLocked]. When ctx ends, it has [CodeAborted] and
// matches ctx.Err(). With [WithBackendTimeout], an attempt the backend
// does not answer in time ends it with [CodeNetworkTimeout]. docs/lock.md
// tells the details.
func Acquire(ctx context.Context, b Backend, key string, opts ...Option) (Lease, error) {
	c, err := newConfig(opts)
	if err != nil {
		return Lease{}, err
	}
	if c.lease != nil {
		return Lease{}, invalid("acquire", "WithLease is for Do and Hold")
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

// waitOp runs acquire as the OpWait op through b's hooks.
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

// acquireOn is Acquire; hooked tells whether b has hooks.
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

// acquisition is one wait for a key, of Acquire or of an election's
// candidate with WithWatch: its attempts, its place in the queue, its timers.
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
	// idUses counts the attempts with id. unknown: an attempt may have
	// taken the lock unseen, so id is released on the way out.
	idUses int

	timer   *time.Timer
	timerAt time.Time // when the pending timer fires; zero when none is pending
	waits   int       // backoff timers started: the index into the delay schedule
	retries int       // attempts counted against retry.MaxRetries
	w       *longWait // with WithWatch or a wait over maxQueueWait; nil else
}

// longWait is the state of a wait with WithWatch or over maxQueueWait.
type longWait struct {
	watch     watch // WithWatch's
	rejoin    *time.Timer
	failures  int
	holderExp time.Time
}

// start picks the attempt function and lock id, and joins the queue.
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

// renew starts again with a new lock id and place.
func (a *acquisition) renew(ctx context.Context) error {
	a.leave(ctx, false)
	return a.start()
}

// finish leaves the queue and stops the timers. After a silent backend
// it leaves in the background: the caller is not held by the server
// that just failed to answer.
func (a *acquisition) finish(ctx context.Context, err error) {
	if errors.Is(err, errSilent) {
		go a.leave(context.WithoutCancel(ctx), false)
	} else {
		a.leave(ctx, err == nil)
	}
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.w != nil && a.w.rejoin != nil {
		a.w.rejoin.Stop()
	}
}

// run attempts until one succeeds, a hand-off arrives, or it gives up.
func (a *acquisition) run(ctx context.Context) (Lease, error) {
	for attempt := 1; ; attempt++ {
		a.idUses++
		l, err := a.attempt(ctx)
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

// errSilent is in the chain of an attempt's error when the backend did
// not answer within WithBackendTimeout: the acquisition ends.
var errSilent = errors.New("lock: the backend did not answer within the backend timeout")

// attempt is one attempt, bounded by WithBackendTimeout when it is set.
func (a *acquisition) attempt(ctx context.Context) (Lease, error) {
	if a.c.backendTimeout <= 0 {
		return a.try(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, a.c.backendTimeout)
	defer cancel()
	l, err := a.try(actx)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return l, newError(CodeNetworkTimeout, "acquire", "no answer within "+a.c.backendTimeout.String(), fmt.Errorf("%w: %w", errSilent, err))
	}
	return l, err
}

// errRejoin asks run for a new place in the queue.
var errRejoin = errors.New("lock: join the queue again")

// judge decides what follows a failed attempt: an error to return, an
// attempt at once with a new id, or neither: a wait.
func (a *acquisition) judge(ctx context.Context, attempt int, err error) (renewed bool, final error) {
	locked := errors.Is(err, ErrLocked)
	if !locked {
		if a.id != "" && a.idUses > 1 && errors.Is(err, ErrNotHeld) {
			// The id was released since, as ReplicaAck does: it
			// takes nothing any more. Try at once with a new one.
			a.unknown = false // released: nothing to release on the way out
			if serr := a.renew(ctx); serr != nil {
				return false, serr
			}
			a.observe(ctx, attempt, err, 0)
			return true, nil
		}
		a.unknown = a.unknown || outcomeUnknown(err)
		// With one id, a retry gets back what a failed attempt took.
		// Without, only a watching wait, which never gives up, retries.
		if (a.id == "" && a.c.watch == nil) || !transient(err) || ctx.Err() != nil || errors.Is(err, errSilent) {
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

// wait waits for a hand-off, a change of holder, the timer or ctx's end.
// It returns a handed-over lease, a zero Lease for another attempt, or
// errRejoin for a new place.
func (a *acquisition) wait(ctx context.Context, attempt int, err error) (Lease, error) {
	d := a.schedule(err)
	a.observe(ctx, attempt, err, d)
	var granted <-chan Lease
	if a.qw != nil {
		granted = a.qw.Granted()
	}
	var changed <-chan struct{}
	if a.c.watch != nil {
		changed = a.w.watch.changed
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

// schedule starts the timer of the next attempt after err and returns
// its delay: the backoff, or for a queued waiter the fallback poll;
// with WithWatch, until the holder's expiry. A pending timer is kept.
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
		// Never sooner than the backoff either.
		d = max(queuedPoll(err, time.Now()), a.c.retry.delay(a.waits))
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

// observe tells b's hooks, if any, of a failed attempt: an OpRetry.
func (a *acquisition) observe(ctx context.Context, attempt int, err error, wait time.Duration) {
	if a.hooked {
		_ = Emit(ctx, a.b, &Op{Kind: OpRetry, Key: a.key, ID: a.id, Attempt: attempt, Err: err, Wait: wait}, nil)
	}
}

// joinQueue returns the waiter of id in b's queue of key, or nil.
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

// attempter returns the function of one attempt on b, and its lock id:
// AcquireSlot with WithLimit, AcquireID on an IDBackend, else Acquire
// (id "").
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

// transient reports whether err is worth another attempt.
func transient(err error) bool { return CodeOf(err).Transient() }

// outcomeUnknown reports whether an attempt that failed with err may
// have taken the lock.
func outcomeUnknown(err error) bool {
	switch CodeOf(err) {
	case CodeInvalidArgument, CodeAuthFailed, CodeAborted:
		return false
	}
	return !errors.Is(err, ErrLocked)
}

// maxQueueWait bounds how long a waiter keeps one place in the queue, so
// that the place of a crashed process expires.
const maxQueueWait = 10 * time.Minute

// leaveTimeout bounds the end of a wait: its leave of the queue, or the
// release of an unknown outcome. The rest goes on in the background.
const leaveTimeout = time.Second

// leave gives up the place in the queue, or releases an id whose outcome
// is unknown, within leaveTimeout and ctx's deadline. took: the caller
// has the lease.
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

// releaseOrphan releases id, trying again after transient errors for up
// to timeout. The release also retires id for late copies of an attempt.
func releaseOrphan(ctx context.Context, b Backend, id string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cleanup.Retry(ctx, func(ctx context.Context) error { return b.Release(ctx, id) }, transient)
}

// minQueuedPoll keeps a queued waiter from spinning when clocks differ.
const minQueuedPoll = 50 * time.Millisecond

// queuedPoll is the wait of a queued waiter after contention err at now:
// until just after the holder's lease ends, at least minQueuedPoll, at
// most the queued poll interval. A lock's key and a limit's slot both end
// at their expiry by the server's clock.
func queuedPoll(err error, now time.Time) time.Duration {
	var le *LockedError
	if !errors.As(err, &le) || le.ExpiresAt.IsZero() {
		return contract.QueuedPollInterval
	}
	d := le.ExpiresAt.Sub(now) + minQueuedPoll
	return min(max(d, minQueuedPoll), contract.QueuedPollInterval)
}

func aborted(err error) *Error {
	return newError(CodeAborted, "acquire", "context done", err)
}
