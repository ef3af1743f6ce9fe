package redisbackend

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

// Release notifications.
//
// The release script (release.lua, also behind ReleaseDone) PUBLISHes on
// the lock's own channel, "<prefix>:released:<lock key>", whenever it
// deletes a lock (a release, or the cleanup of an expired lease found by a
// release). A Backend subscribes to a key's channel while it has waiters on
// that key, and a dispatcher goroutine hands each message to ONE waiter of
// the key in this process, oldest first. So a release costs a message only
// for the instances that wait on that very key: a release nobody waits on
// is delivered to no one, however many instances share the Redis.
//
// The woken waiter (lock.Acquire) registers a new watch at the back of the
// queue and tries to acquire; if it gets the lock, its eventual release
// wakes the next waiter, so a hot key is handed from waiter to waiter
// without a thundering herd.
//
// Subscriptions follow the waiters: the first watch of a key queues a
// SUBSCRIBE, and a key without waiters for subscriptionIdle is unsubscribed
// (so a hot key, whose queue empties for a moment at every hand-off, keeps
// its subscription). A subscriber goroutine sends these in order on the
// Backend's one pub/sub connection. Until Redis confirms a subscription a
// release of the key reaches no one, so the confirmation wakes every waiter
// of that key, which then tries again (as a reconnect's confirmations do):
// no release is missed, at the cost of one spurious attempt per new watch.
//
// Channels are not keys, so a channel name never aliases a lock key. In
// Redis Cluster a PUBLISH reaches every node's subscribers; a later change
// may switch to sharded pub/sub (SPUBLISH/SSUBSCRIBE, which needs the
// channel in the script's hash slot).

// releasedChannelPrefix is the start of a prefix's release channels, passed
// to the release scripts, which append the lock key.
func releasedChannelPrefix(prefix string) string { return prefix + ":released:" }

// subscriptionIdle is how long a key's channel stays subscribed after its
// last waiter left.
const subscriptionIdle = time.Second

// subscriber is the part of a go-redis client that pub/sub needs.
type subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// notifyBuffer is the size of the go-redis message buffer between the
// connection reader and the dispatcher (which never blocks).
const notifyBuffer = 1024

// notifier holds the waiters of one Backend and its subscriptions.
type notifier struct {
	sub     subscriber // nil: notifications unavailable
	channel string     // releasedChannelPrefix

	mu      sync.Mutex
	started bool
	closed  bool
	pubsub  *redis.PubSub // set with started
	done    chan struct{} // closed when the dispatcher and subscriber exit
	kick    chan struct{} // capacity 1: ops pending, or closed
	queues  map[string]*waitQueue
	subs    map[string]time.Time // subscribed lock keys: since when idle (zero while waited on)
	ops     []subOp              // SUBSCRIBE/UNSUBSCRIBE to send, in order
}

// subOp is one SUBSCRIBE (sub) or UNSUBSCRIBE of a release channel.
type subOp struct {
	channel string
	sub     bool
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
	n := &notifier{channel: releasedChannelPrefix(prefix), queues: map[string]*waitQueue{}, subs: map[string]time.Time{}}
	if disabled {
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
// client cannot subscribe (it lacks Subscribe), key is
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
		n.kick = make(chan struct{}, 1)
		// No channel yet: this does no I/O. The dispatcher's reader
		// connects; the subscriber sends the SUBSCRIBEs.
		n.pubsub = n.sub.Subscribe(context.Background())
		go n.run()
	}
	q := n.queues[lockKey]
	if q == nil {
		q = &waitQueue{}
		n.queues[lockKey] = q
	}
	q.push(w)
	if _, ok := n.subs[lockKey]; ok {
		n.subs[lockKey] = time.Time{}
	} else {
		n.subs[lockKey] = time.Time{}
		n.ops = append(n.ops, subOp{channel: n.channel + lockKey, sub: true})
		n.kickLocked()
	}
	n.mu.Unlock()
	return w.ch, func() { n.cancel(w) }
}

// kickLocked tells the subscriber that ops are pending.
func (n *notifier) kickLocked() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
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
	if n.kick != nil {
		close(n.kick)
	}
	n.mu.Unlock()
	var err error
	if ps != nil {
		err = ps.Close()
	}
	if done != nil {
		<-done
	}
	return err
}

// run starts the subscriber and runs the dispatcher: it routes every
// message to one waiter of its lock key, and wakes every waiter of a key
// when Redis confirms the key's subscription (the first, and those after a
// reconnect), since releases published while not subscribed were lost.
func (n *notifier) run() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.subscribe()
	}()
	defer func() {
		wg.Wait()
		close(n.done)
	}()
	for m := range n.pubsub.ChannelWithSubscriptions(redis.WithChannelSize(notifyBuffer)) {
		switch m := m.(type) {
		case *redis.Message:
			n.mu.Lock()
			n.wakeOneLocked(strings.TrimPrefix(m.Channel, n.channel))
			n.mu.Unlock()
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				n.mu.Lock()
				n.wakeKeyLocked(strings.TrimPrefix(m.Channel, n.channel))
				n.mu.Unlock()
			}
		}
	}
}

// subscribe sends the pending SUBSCRIBEs and UNSUBSCRIBEs in order, and
// every subscriptionIdle queues the UNSUBSCRIBE of the keys idle for that
// long, until Close.
func (n *notifier) subscribe() {
	ticker := time.NewTicker(subscriptionIdle)
	defer ticker.Stop()
	ctx := context.Background()
	for {
		select {
		case _, ok := <-n.kick:
			if !ok {
				return
			}
		case now := <-ticker.C:
			n.mu.Lock()
			for k, idle := range n.subs {
				if !idle.IsZero() && now.Sub(idle) >= subscriptionIdle {
					delete(n.subs, k)
					n.ops = append(n.ops, subOp{channel: n.channel + k})
				}
			}
			n.mu.Unlock()
		}
		n.mu.Lock()
		ops := n.ops
		n.ops = nil
		n.mu.Unlock()
		for _, op := range ops {
			// An error means the connection is down: go-redis
			// resubscribes the channels it holds when it reconnects, and
			// the confirmations wake their waiters.
			if op.sub {
				_ = n.pubsub.Subscribe(ctx, op.channel)
			} else {
				_ = n.pubsub.Unsubscribe(ctx, op.channel)
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

// wakeKeyLocked wakes every waiter of lockKey.
func (n *notifier) wakeKeyLocked(lockKey string) {
	for n.queues[lockKey] != nil {
		n.wakeOneLocked(lockKey)
	}
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
		if _, ok := n.subs[w.lockKey]; ok {
			n.subs[w.lockKey] = time.Now()
		}
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
