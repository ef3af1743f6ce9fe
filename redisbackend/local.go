package redisbackend

import (
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Locality: a hot lock stays in the process that holds it, within a bound.
//
// A waiter that arrives while a lease of its own Backend holds the key
// parks here instead of queueing in Redis. For Options.HandOffLocality
// after the lock came to this Backend, its releases hand the lock to a
// waiter of the same Backend, in the release's reply. After that, releases
// hand it on in queue order, and the parked waiters queue in Redis. Only
// keys that made a waiter wait are tracked. The cluster layout does not
// park. docs/waiting.md has the rules and the figures.

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

// holdLocked records that lease id of a waiter holds lockKey until exp.
// arrived tells the lock came from another process.
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
// the lock came to this Backend less than q ago; and the first waiter
// parked behind it, taken off. The release names that waiter to
// release.lua, so from then on its Leave releases what its id may hold.
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

// releasedID is released for a release that names no candidate, such as
// ReleaseDone: the parked waiters of lease id's key are asked to attempt.
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
// candidate was c. granted is the lock id the release handed the lease to
// in its reply, or "". When the lock stays, c goes back to the front of
// the parked waiters; when it left, every parked waiter is asked to attempt.
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
			// Not granted: back to the front. Its id holds nothing.
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
