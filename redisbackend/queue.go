package redisbackend

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Waiter queues. Each lock key has a sorted set of waiters,
// "<prefix>:queue:<lock key>", scored by when each first queued. An entry
// is one waiting lock.Acquire call:
//
//	"<lock id> <ttl ms> <wait ms> <l|n><s|k>[m<n>] <channel length> <channel><fence key>"
//
// acquire.lua queues an entry when the key is busy. A release
// (handoff.lua) grants the lock to the oldest live entry and announces it
// on the entry's channel. Clients that do not queue never touch the queue.
// docs/waiting.md has the protocol.

// queueMinTTL is the least TTL of a queue key.
const queueMinTTL = time.Minute

var _ lock.IDBackend = (*Backend)(nil)

// queueWaiter is one lock.Waiter.
type queueWaiter struct {
	b    *Backend
	key  string // as given to Join
	id   string
	ttl  time.Duration
	wait time.Duration
	n    int  // a slot among n (limit.go); 0 for the lock
	mode byte // 'r' or 'w' for a read-write lock (rw.go); 0 else

	// Set by the first attempt that queues (or parks).
	norm, lockKey, queueKey, entry string
	queueTTL                       int64

	ch         chan lock.Lease // capacity 1: a hand-off, or a request for an attempt
	registered bool            // in the notifier's waiters (written under its lock, by the waiter's goroutine only)
	queued     bool            // an attempt queued (or may have queued) the entry
	unknown    bool            // an attempt may have taken the lock without saying so
	left       bool
	parked     bool // behind a lease of its Backend on its key (local.go; under the notifier's lock)
	named      bool // a release named it as its candidate (local.go; under the notifier's lock)
	parkedOnce bool // its first attempt tried to park: the next ones go to Redis
	waited     bool // an attempt found the key busy (or parked)
}

// Join implements lock.IDBackend: the waiter for the lock when n is 0,
// for one of n slots otherwise. It does no I/O. It returns an error
// matching errors.ErrUnsupported when hand-offs are off: with
// Options.DisableNotifications, with Options.ReplicaAck, or after Close.
func (b *Backend) Join(key, id string, n int, ttl, wait time.Duration) (lock.Waiter, error) {
	if n != 0 {
		if err := b.slotsUsable(n); err != nil {
			return nil, err
		}
	}
	if !b.notify.usable() {
		return nil, fmt.Errorf("redisbackend: waiter queues are off (notifications disabled, ReplicaAck, no Subscribe, or closed): %w", errors.ErrUnsupported)
	}
	return &queueWaiter{b: b, key: key, id: id, n: n, ttl: ttl, wait: wait, ch: make(chan lock.Lease, 1)}, nil
}

// Attempt implements lock.Waiter. Until the key is found busy it is a
// plain attempt, so an uncontended acquisition starts no subscription.
// The first contention registers the waiter, which queues once the
// subscription is confirmed.
func (w *queueWaiter) Attempt(ctx context.Context) (lock.Lease, error) {
	n := w.b.notify
	if !w.parkedOnce && w.plain() && w.b.quantum > 0 && w.prepare() {
		// The first attempt of a waiter whose Backend holds the key parks
		// it in the process; a later one goes to Redis.
		w.parkedOnce = true
		if exp, ok := n.park(w); ok {
			w.waited = true
			return lock.Lease{}, &lock.LockedError{ExpiresAt: exp}
		}
	}
	if w.parkedOnce {
		n.unpark(w)
	}
	var q *queueWaiter
	if (w.registered || n.isReady()) && w.prepare() && n.register(w) {
		q = w
	}
	l, err := w.b.acquireQueued(ctx, w, q)
	if q == nil && errors.Is(err, lock.ErrLocked) && w.prepare() && n.register(w) {
		q = w
		l, err = w.b.acquireQueued(ctx, w, q)
	}
	if q != nil {
		w.queued = true
	}
	switch {
	case errors.Is(err, lock.ErrLocked):
		w.waited = true
	case err == nil && w.waited && w.plain() && w.b.quantum > 0 && w.lockKey != "":
		// Only a key that made a waiter wait is tracked, so a quiet key
		// costs the notifier nothing.
		n.hold(w.lockKey, w.id, l.ExpiresAt)
	}
	if err != nil && !errors.Is(err, lock.ErrLocked) && mayHaveRun(err) {
		w.unknown = true
	}
	return l, err
}

// prepare computes the waiter's queue key and entry, once, and reports
// whether it can queue (its key and TTL are valid).
func (w *queueWaiter) prepare() bool {
	if w.entry != "" {
		return true
	}
	b := w.b
	norm, lockKey, err := b.lockKey("acquire", w.key)
	if err != nil || lockdriver.ValidateLockID(w.id) != nil || w.ttl.Milliseconds() <= 0 {
		return false // the attempt reports it
	}
	fenceKey, err := b.fenceKey(norm, lockKey)
	if err != nil {
		return false
	}
	flags := "n"
	if b.notify.live {
		flags = "l"
	}
	if b.stripes > 0 {
		flags += "s"
	} else {
		flags += "k"
	}
	switch {
	case w.n > 0:
		// A slot's entry (lib().grant in lib.lua); a lock's hand-off
		// (handoff.lua) drops it.
		flags += "m" + strconv.Itoa(w.n)
	case w.mode != 0:
		flags += string(w.mode) // a read-write lock's (rw.lua); the others drop it
	}
	ch := b.notify.channel
	w.norm, w.lockKey = norm, lockKey
	w.queueKey = wire.QueueKey(b.prefix, lockKey)
	w.queueTTL = max(w.wait, queueMinTTL).Milliseconds()
	w.entry = w.id + " " + strconv.FormatInt(w.ttl.Milliseconds(), 10) + " " +
		strconv.FormatInt(max(w.wait.Milliseconds(), 1), 10) + " " + flags + " " +
		strconv.Itoa(len(ch)) + " " + ch + fenceKey
	return true
}

// acquireQueued is w's AcquireID (AcquireSlot for a slot, AcquireRW for
// a read-write lock) that, with q, also queues q's entry when the key is
// busy.
func (b *Backend) acquireQueued(ctx context.Context, w, q *queueWaiter) (lock.Lease, error) {
	if err := lockdriver.ValidateLockID(w.id); err != nil {
		return lock.Lease{}, withOp(err, "acquire")
	}
	if w.mode != 0 {
		return b.acquireRW(ctx, w.key, w.id, w.mode, w.ttl, q)
	}
	return b.acquire(ctx, w.key, w.id, w.n, w.ttl, q)
}

// plain reports whether w waits for a plain lock: only those park in the
// process (local.go).
func (w *queueWaiter) plain() bool { return w.n == 0 && w.mode == 0 }

// Granted implements lock.Waiter.
func (w *queueWaiter) Granted() <-chan lock.Lease { return w.ch }

// Leave implements lock.Waiter.
func (w *queueWaiter) Leave(took bool) {
	if w.mustLeave(took) {
		go untilLeft(context.Background(), w.ttl, w.b.leaveCall(w))
	}
}

// LeaveWait is Leave(false) that waits for Redis's answer under ctx. It
// returns ctx's error if ctx ends first; the work then goes on.
func (w *queueWaiter) LeaveWait(ctx context.Context) error {
	if !w.mustLeave(false) {
		return nil
	}
	call := w.b.leaveCall(w)
	if untilLeft(ctx, w.ttl, call) {
		return nil
	}
	go untilLeft(context.Background(), w.ttl, call)
	return ctx.Err()
}

// mustLeave marks w left and reports whether its id may hold a lease or
// its entry may be queued: Redis must then be told.
func (w *queueWaiter) mustLeave(took bool) bool {
	if w.left {
		return false
	}
	w.left = true
	named := false
	if w.registered {
		named = w.b.notify.unregister(w)
	}
	return !took && (w.queued || w.unknown || named)
}

// leaveCall takes w's entry out of its queue and releases whatever w's id
// holds. Its tries share one nonce.
func (b *Backend) leaveCall(w *queueWaiter) func(context.Context) error {
	idKey := b.indexKey(w.id)
	if w.entry == "" || !w.queued {
		return func(ctx context.Context) error { return b.release(ctx, idKey, w.id).Err() }
	}
	leave := b.releaseLeaveCmd(idKey, w)
	return func(ctx context.Context) error { return b.run(ctx, leave).Err() }
}

// untilLeft runs call, a waiter's leave, until Redis answers, ctx ends or
// the lease's TTL passes. It reports whether Redis answered.
func untilLeft(ctx context.Context, ttl time.Duration, call func(context.Context) error) (answered bool) {
	ctx, cancel := context.WithTimeout(ctx, max(ttl, lockdriver.DefaultReleaseTimeout))
	defer cancel()
	untilAnswered(ctx, func(ctx context.Context) error {
		err := call(ctx)
		answered = err == nil || (ctx.Err() == nil && !transient(ctx, err))
		return err
	})
	return answered
}

// releaseLeaveCmd is the call of release_leave.lua for waiter w (idKey its
// index key): KEYS index key, queue key; ARGV lock id, tombstone ttl in
// ms, a nonce of this call, the start of the queue keys, w's queue entry.
func (b *Backend) releaseLeaveCmd(idKey string, w *queueWaiter) scriptCmd {
	return releaseLeaveScript.cmd(2, idKey, w.queueKey, w.id, b.tombArg, b.nonce(), b.queueArg, w.entry)
}
