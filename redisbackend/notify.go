package redisbackend

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

// Release notifications.
//
// The release script (release.lua, also behind ReleaseDone) PUBLISHes the
// lock key on the channel "<prefix>:released" whenever it deletes a lock (a release,
// or the cleanup of an expired lease found by a release). A Backend opens
// one subscription to that channel, lazily on the first WatchKey, and a
// dispatcher goroutine hands each message to ONE waiter of that lock key in
// this process, oldest first. The woken waiter (lock.Acquire) registers a
// new watch at the back of the queue and tries to acquire; if it gets the
// lock, its eventual release wakes the next waiter, so a hot key is handed
// from waiter to waiter without a thundering herd.
//
// Channels are not keys, so the channel name never aliases a lock key. In
// Redis Cluster a PUBLISH reaches every node's subscribers; a later change
// may switch to sharded pub/sub (SPUBLISH/SSUBSCRIBE, which needs the
// channel in the script's hash slot).

// releasedChannel is the pub/sub channel of a prefix's releases, passed to
// the release scripts.
func releasedChannel(prefix string) string { return prefix + ":released" }

// subscriber is the part of a go-redis client that pub/sub needs.
type subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// notifyBuffer is the size of the go-redis message buffer between the
// connection reader and the dispatcher (which never blocks).
const notifyBuffer = 1024

// notifier holds the waiters of one Backend and its subscription.
type notifier struct {
	sub     subscriber // nil: notifications unavailable
	channel string

	mu      sync.Mutex
	started bool
	closed  bool
	pubsub  *redis.PubSub // set by the dispatcher once subscribed
	done    chan struct{} // closed when the dispatcher exits
	queues  map[string]*waitQueue
}

// waitQueue is the FIFO of the waiters of one lock key (an intrusive
// doubly linked list, so cancel is O(1)).
type waitQueue struct {
	head, tail *waiter
}

type waiter struct {
	lockKey    string
	ch         chan struct{} // capacity 1: at most one wake-up is ever sent
	prev, next *waiter
	queued     bool // in its key's queue (neither woken nor cancelled)
	cancelled  bool
}

// newNotifier returns the notifier of a Backend on client; it does not
// subscribe until the first watch. With disabled, or a client that cannot
// subscribe usefully, every watch is nil and waiters poll.
func newNotifier(client redis.Scripter, prefix string, disabled bool) *notifier {
	n := &notifier{channel: releasedChannel(prefix), queues: map[string]*waitQueue{}}
	if disabled {
		return n
	}
	if _, ring := client.(*redis.Ring); ring {
		// A Ring shards pub/sub channels by name, and a release publishes
		// on the shard of its keys: the subscription would miss most.
		return n
	}
	if s, ok := client.(subscriber); ok {
		n.sub = s
	}
	return n
}

var _ lock.Notifier = (*Backend)(nil)

// WatchKey implements lock.Notifier: ch receives once after a release of a
// lease on key is published, or spuriously (after the subscription is
// (re)established, when a wake-up is handed on by a cancelled watch, or
// when the Backend is closed). It never blocks: the first call starts the
// shared subscription in the background. ch is nil, so the caller polls,
// when notifications are disabled (Options.DisableNotifications), the
// client cannot subscribe (it lacks Subscribe, or is a *redis.Ring), key is
// invalid, or the Backend is closed. cancel must be called when the caller
// stops waiting; it is idempotent.
func (b *Backend) WatchKey(key string) (ch <-chan struct{}, cancel func()) {
	n := b.notify
	if n == nil || n.sub == nil {
		return nil, func() {}
	}
	_, lockKey, err := b.lockKey("watch", key)
	if err != nil {
		return nil, func() {}
	}
	w := &waiter{lockKey: lockKey, ch: make(chan struct{}, 1)}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, func() {}
	}
	if !n.started {
		n.started = true
		n.done = make(chan struct{})
		go n.run()
	}
	q := n.queues[lockKey]
	if q == nil {
		q = &waitQueue{}
		n.queues[lockKey] = q
	}
	q.push(w)
	n.mu.Unlock()
	return w.ch, func() { n.cancel(w) }
}

// Close stops the release subscription and its dispatcher goroutine, and
// wakes the current waiters, which then fall back to polling; later
// watches are nil. It does not close the Redis client, and the Backend
// keeps working otherwise. It is idempotent and safe to call concurrently
// with anything else; it returns the error of closing the subscription.
func (b *Backend) Close() error {
	if b.notify == nil {
		return nil
	}
	return b.notify.close()
}

func (n *notifier) close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	ps, done := n.pubsub, n.done
	n.wakeAllLocked()
	n.mu.Unlock()
	var err error
	if ps != nil {
		err = ps.Close()
	}
	if done != nil {
		// Without a PubSub yet, the dispatcher is still subscribing; it
		// sees closed and closes the PubSub itself.
		<-done
	}
	return err
}

// run is the dispatcher: it subscribes, then routes every message to one
// waiter of its lock key, and wakes every waiter on each subscription
// confirmation (the first, and those after a reconnect), since releases
// published while not subscribed were lost.
func (n *notifier) run() {
	defer close(n.done)
	// Subscribe dials; go-redis keeps the channel in the PubSub and retries
	// the connection (resubscribing) on its own when this first try fails.
	ps := n.sub.Subscribe(context.Background(), n.channel)
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		_ = ps.Close()
		return
	}
	n.pubsub = ps
	n.mu.Unlock()
	for m := range ps.ChannelWithSubscriptions(redis.WithChannelSize(notifyBuffer)) {
		switch m := m.(type) {
		case *redis.Message:
			n.mu.Lock()
			n.wakeOneLocked(m.Payload)
			n.mu.Unlock()
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				n.mu.Lock()
				n.wakeAllLocked()
				n.mu.Unlock()
			}
		}
	}
}

// cancel unregisters w. A wake-up sent to w that its owner did not
// consume is handed to the next waiter of the key.
func (n *notifier) cancel(w *waiter) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w.cancelled {
		return
	}
	w.cancelled = true
	if w.queued {
		n.removeLocked(w)
		return
	}
	select {
	case <-w.ch:
		n.wakeOneLocked(w.lockKey)
	default:
	}
}

// wakeOneLocked wakes the oldest waiter of lockKey, if any.
func (n *notifier) wakeOneLocked(lockKey string) {
	q := n.queues[lockKey]
	if q == nil {
		return
	}
	w := q.head
	n.removeLocked(w)
	w.ch <- struct{}{} // never blocks: capacity 1, sent at most once
}

// wakeAllLocked wakes every waiter.
func (n *notifier) wakeAllLocked() {
	for k, q := range n.queues {
		for w := q.head; w != nil; {
			next := w.next
			w.prev, w.next, w.queued = nil, nil, false
			w.ch <- struct{}{}
			w = next
		}
		delete(n.queues, k)
	}
}

// removeLocked takes a queued waiter out of its queue, dropping the queue
// when it empties.
func (n *notifier) removeLocked(w *waiter) {
	q := n.queues[w.lockKey]
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	if q.head == nil {
		delete(n.queues, w.lockKey)
	}
}

func (q *waitQueue) push(w *waiter) {
	w.queued = true
	w.prev = q.tail
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
}
