package redisbackend

import (
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Locality: a hot lock stays in the process that holds it, within a bound.
//
// A waiter (queue.go) that arrives while a lease of its own Backend holds
// the key does not queue in Redis: it parks here, behind the Backend's
// other parked waiters of the key. Its releases name the first parked
// waiter to release.lua (the candidate) with a bound: for
// Options.HandOffLocality (the quantum) after the lock came to this
// Backend, five quanta. While the oldest waiter in the key's Redis queue
// has queued for less than the bound, the release grants the lease to the
// Backend's own oldest queued waiter, else to the candidate, and answers
// it in its reply: one round trip per hand-off, no message, no other
// process woken. After the quantum the bound is 1 µs: releases hand the
// lock on in queue order (to the candidate only when nobody waits in
// Redis), so the processes that wait take turns (sync.Mutex's model: a waiter past a
// bound is served in order). When the lock leaves the Backend, or the
// release fails, every parked waiter of the key is asked for an attempt
// at once, which queues it in Redis. A parked waiter whose fallback comes
// first (its holder's expiry: the lease may be lost) queues in Redis by
// its next attempt.
//
// The holder of a key is known only for leases of the Backend's waiters
// (lock.Acquire and lock.Do with a wait) that waited: handed over, or taken
// by an attempt after one found the key busy. A key held by Backend.Acquire,
// or by a waiter that took it at once, parks nobody: a quiet key costs the
// notifier nothing, and a hot one is tracked from its first hand-off. The
// cluster layout does not park (its release reads the index before it
// writes: index_read.lua).

// DefaultHandOffLocality is Options.HandOffLocality's default.
const DefaultHandOffLocality = 10 * time.Millisecond

// localKey is what the notifier knows of a key a waiter's lease holds.
type localKey struct {
	holder  string    // lock id of the lease
	expires time.Time // its expiry, as the grant said
	since   time.Time // when the lock came to this Backend
	parked  []*queueWaiter
}

// quantum is Options.HandOffLocality with its default (negative: off).
func quantum(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultHandOffLocality
	}
	return d
}

// localQuantum is the quantum of a Backend: 0 (off) when negative or in
// the cluster layout.
func localQuantum(d time.Duration, layout Layout) time.Duration {
	if d < 0 || layout == LayoutCluster {
		return 0
	}
	return quantum(d)
}

// localityArg is release.lua's bound on the oldest waiter's time in the
// queue, in µs: five quanta.
func localityArg(q time.Duration) any {
	return strconv.FormatInt(max(5*q.Microseconds(), 1), 10)
}

// orderArg is release.lua's bound after the quantum: a candidate gets the
// lock only when nobody waits in Redis.
var orderArg any = "1"

// holdLocked records that lease id of a waiter holds lockKey until exp;
// arrived when the lock came from elsewhere (not a hand-off of this
// Backend's own release).
func (n *notifier) holdLocked(lockKey, id string, exp time.Time, arrived bool) {
	if n.local == nil {
		n.local, n.localIDs = map[string]*localKey{}, map[string]string{}
	}
	lk := n.local[lockKey]
	if lk == nil {
		lk = &localKey{}
		n.local[lockKey] = lk
	} else if lk.holder != "" {
		n.forgetLocked(lk.holder)
	}
	lk.holder, lk.expires = id, exp
	if arrived || lk.since.IsZero() {
		lk.since = time.Now()
	}
	if _, ok := n.localIDs[id]; !ok {
		n.tracked.Add(1)
	}
	n.localIDs[id] = lockKey
}

// forgetLocked forgets the key of lease id.
func (n *notifier) forgetLocked(id string) {
	if _, ok := n.localIDs[id]; ok {
		delete(n.localIDs, id)
		n.tracked.Add(-1)
	}
}

// hold is holdLocked under the notifier's lock, for a lease an attempt
// took.
func (n *notifier) hold(lockKey, id string, exp time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.holdLocked(lockKey, id, exp, true)
}

// park parks w when a lease of this Backend holds w's key, and returns
// that lease's expiry.
func (n *notifier) park(w *queueWaiter) (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	lk := n.local[w.lockKey]
	if n.closed || lk == nil || lk.holder == "" || !time.Now().Before(lk.expires) {
		return time.Time{}, false
	}
	if !w.registered {
		w.registered = true
		n.waiters[w.id] = w
	}
	n.lastUse = time.Now()
	lk.parked = append(lk.parked, w)
	w.parked = true
	return lk.expires, true
}

// unparkLocked takes w off its key's parked waiters.
func (n *notifier) unparkLocked(w *queueWaiter) {
	if !w.parked {
		return
	}
	w.parked = false
	lk := n.local[w.lockKey]
	if lk == nil {
		return
	}
	for i, p := range lk.parked {
		if p == w {
			lk.parked = append(lk.parked[:i], lk.parked[i+1:]...)
			break
		}
	}
	n.dropLocked(w.lockKey, lk)
}

// unpark is unparkLocked under the notifier's lock.
func (n *notifier) unpark(w *queueWaiter) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.unparkLocked(w)
}

// dropLocked forgets lockKey when nothing of it is left to know.
func (n *notifier) dropLocked(lockKey string, lk *localKey) {
	if lk.holder == "" && len(lk.parked) == 0 {
		delete(n.local, lockKey)
	}
}

// candidate returns the key that lease id holds, if a waiter's; whether
// the lock came to this Backend less than q ago (the release may keep it
// here even though others wait); and the first waiter parked behind it,
// taken off the parked waiters: the release names it to release.lua,
// which grants it the lock when the lock may stay, or when nobody waits
// in Redis. From then on its Leave releases what its id may hold (the
// release may have granted it the lease: named).
func (n *notifier) candidate(id string, q time.Duration) (string, bool, *queueWaiter) {
	if n.tracked.Load() == 0 {
		return "", false, nil // the release of every lock that no waiter took
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	lockKey, ok := n.localIDs[id]
	if !ok {
		return "", false, nil
	}
	lk := n.local[lockKey]
	if lk == nil {
		return lockKey, false, nil
	}
	young := time.Since(lk.since) < q
	if len(lk.parked) == 0 {
		return lockKey, young, nil
	}
	c := lk.parked[0]
	lk.parked = lk.parked[1:]
	c.parked, c.named = false, true
	return lockKey, young, c
}

// releasedID is released for a release that names no candidate and keeps
// no lock here (ReleaseDone, ReleaseRecord): the parked waiters of lease
// id's key, if a waiter's, are asked for an attempt.
func (n *notifier) releasedID(id string) {
	if n == nil || n.tracked.Load() == 0 {
		return
	}
	n.mu.Lock()
	lockKey, ok := n.localIDs[id]
	n.mu.Unlock()
	if ok {
		n.released(id, lockKey, "", nil)
	}
}

// released records the end of the release of lease id on lockKey, whose
// candidate was c (or nil): granted is the lock id the release handed
// the lease to in its reply ("" when it did not hand it to a waiter of
// this Backend). When the lock stays, c (if not the one granted) goes back
// to the front of the parked waiters; when it left, every parked waiter,
// c too, is asked for an attempt at once.
func (n *notifier) released(id, lockKey, granted string, c *queueWaiter) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.forgetLocked(id)
	lk := n.local[lockKey]
	if lk == nil {
		lk = &localKey{}
	}
	if lk.holder == id {
		lk.holder, lk.since = "", time.Time{}
	}
	if granted != "" && lk.holder == granted {
		if c != nil && c.id != granted && c.registered {
			// Not granted: back to the front, as it was (a parked waiter
			// has made no attempt in Redis, so its id holds nothing).
			c.parked, c.named = true, false
			lk.parked = append([]*queueWaiter{c}, lk.parked...)
		}
		n.local[lockKey] = lk
		return
	}
	if c != nil && c.id != granted {
		pokeLocked(c)
	}
	for _, w := range lk.parked {
		w.parked = false
		pokeLocked(w)
	}
	lk.parked = nil
	n.dropLocked(lockKey, lk)
}

// pokeLocked asks w for an attempt at once (a zero Lease on its channel).
func pokeLocked(w *queueWaiter) {
	select {
	case w.ch <- lock.Lease{}:
	default:
	}
}
