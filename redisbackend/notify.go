package redisbackend

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Hand-off notifications.
//
// Each Backend has a channel of its own, "<prefix>:waiter:<random>", that
// it subscribes to while it has waiters in a key's queue (queue.go), and
// for subscriptionIdle after the last one left (so a hot key, whose waiters
// come and go, keeps the subscription). A release that hands a lock to a
// queued waiter (handoff.lua) PUBLISHes "<lock id> <fence> <expiresAtMs>"
// on the channel of that waiter's Backend, and the dispatcher goroutine
// passes the lease to the waiter; when the waiter is the releasing
// Backend's own, Release passes it the lease from the script's reply and
// nothing is published (a reply that never comes leaves the waiter to its
// polling, as a lost message does). So a release costs at most one
// message, to one process, however many processes share the Redis; a
// release of a key nobody waits on costs none.
//
// Until Redis confirms the subscription, hand-offs to this Backend would be
// lost: its waiters do not queue (their attempts are plain attempts) until
// then. When the connection drops, go-redis re-subscribes on reconnecting;
// hand-offs published meanwhile found no subscriber, and handoff.lua
// dropped those waiters' entries (in the single layout, where PUBLISH
// counts subscribers). The confirmation of the new subscription asks every
// waiter for an attempt at once, which queues it again.
//
// Channels are not keys, so a channel name never aliases a lock key. In
// Redis Cluster a PUBLISH reaches every node's subscribers.

// subscriptionIdle is how long the channel stays subscribed after the last
// waiter left.
const subscriptionIdle = time.Second

// subscriber is the part of a go-redis client that pub/sub uses.
type subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// pingAfter is how long the subscription connection may be silent before
// it is PINGed (go-redis's PubSub.Channel health check does the same).
const pingAfter = 3 * time.Second

// readRetryPause is the pause between failed reads of the subscription
// connection after the first (Redis down: each read dials).
const readRetryPause = 100 * time.Millisecond

// notifier holds the queued waiters of one Backend and its subscription.
type notifier struct {
	sub     subscriber // nil: hand-offs off (Options), waiters poll
	channel string     // this Backend's hand-off channel
	// live is whether handoff.lua may drop an entry whose channel has no
	// subscriber (PUBLISH counts them on the one server of the single
	// layout; in Redis Cluster it counts one node's).
	live bool

	mu         sync.Mutex
	started    bool
	closed     bool
	pubsub     *redis.PubSub // set with started
	done       chan struct{} // closed when the dispatcher and subscriber exit
	kick       chan struct{} // capacity 1: a (un)subscription to send, or closed
	waiters    map[string]*queueWaiter
	subscribed bool      // SUBSCRIBE sent (and no UNSUBSCRIBE since)
	ready      bool      // Redis confirmed the subscription
	lastUse    time.Time // when a waiter last registered or left

	// local and localIDs: the keys the leases of this Backend's waiters
	// hold, and the waiters parked behind them (local.go); by lock key,
	// and lock key by lease id.
	local    map[string]*localKey
	localIDs map[string]string
	tracked  atomic.Int64 // len(localIDs), read without the lock by every Release

	lastRead  atomic.Int64  // when the dispatcher last read (UnixNano)
	pingAfter time.Duration // pingAfter, or a test's; fixed before the subscriber starts
}

// newNotifier returns the notifier of a Backend on client; it does not
// subscribe until a waiter needs it. With disabled, Join reports
// errors.ErrUnsupported and waiters poll.
func newNotifier(client redis.UniversalClient, prefix string, disabled, live bool) *notifier {
	n := &notifier{
		channel:   prefix + ":waiter:" + lockdriver.NewLockID(),
		live:      live,
		waiters:   map[string]*queueWaiter{},
		pingAfter: pingAfter,
	}
	if !disabled {
		n.sub = client
	}
	return n
}

// usable reports whether waiters can queue on this notifier.
func (n *notifier) usable() bool {
	if n == nil || n.sub == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.closed
}

// isReady reports whether Redis confirmed the subscription.
func (n *notifier) isReady() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ready && !n.closed
}

// register adds w, which is about to attempt, to the waiters hand-offs
// (and requests for an attempt) are delivered to, and reports whether w's
// attempt may queue: not while the subscription is unconfirmed (it is
// then requested, and its confirmation asks w for an attempt), nor after
// Close.
func (n *notifier) register(w *queueWaiter) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.lastUse = time.Now()
	if !w.registered {
		w.registered = true
		n.waiters[w.id] = w
	}
	if !n.ready {
		n.startLocked()
		return false
	}
	return true
}

// unregister removes w, and reports whether a release named it as its
// candidate (local.go): its id may hold the lease that release granted.
func (n *notifier) unregister(w *queueWaiter) (named bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w.registered {
		w.registered = false
		delete(n.waiters, w.id)
		n.lastUse = time.Now()
	}
	n.unparkLocked(w)
	return w.named
}

// startLocked starts the dispatcher and subscriber on first use, and asks
// the subscriber to subscribe.
func (n *notifier) startLocked() {
	if !n.started {
		n.started = true
		n.done = make(chan struct{})
		n.kick = make(chan struct{}, 1)
		// No channel yet: this does no I/O. The dispatcher's reader
		// connects; the subscriber sends the SUBSCRIBE.
		n.pubsub = n.sub.Subscribe(context.Background())
		n.lastRead.Store(time.Now().UnixNano())
		go n.run()
	}
	if !n.subscribed {
		select {
		case n.kick <- struct{}{}:
		default:
		}
	}
}

// Close stops the hand-off subscription and its dispatcher goroutine, and
// asks the current waiters for an attempt at once (they then poll); later
// waits poll. It does not close the Redis client, and the Backend keeps
// working otherwise. It is idempotent and safe to call concurrently with
// anything else; it returns the error of closing the subscription.
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
	n.ready = false
	ps, done := n.pubsub, n.done
	n.pokeAllLocked()
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

// run starts the subscriber and runs the dispatcher: it passes every
// hand-off to its waiter, and asks every waiter for an attempt when Redis
// confirms the subscription (the first, and those after a reconnect).
//
// It reads the subscription connection itself (PubSub.Receive) rather
// than through go-redis's PubSub.Channel, whose reader goroutine forwards
// every message through a channel and pokes a health-check goroutine: two
// more goroutine wake-ups on the path of every hand-off, which is the
// critical path of a hot key. It keeps what Channel does: a PING when the
// connection was silent for pingAfter (subscribe sends it; a ping that
// fails makes go-redis reconnect, and go-redis re-subscribes on
// reconnecting) and a pause between failed reads.
func (n *notifier) run() {
	var wg sync.WaitGroup
	wg.Go(n.subscribe)
	defer func() {
		wg.Wait()
		close(n.done)
	}()
	ctx := context.Background()
	failures := 0
	for {
		m, err := n.pubsub.Receive(ctx)
		n.lastRead.Store(time.Now().UnixNano())
		if err != nil {
			if errors.Is(err, redis.ErrClosed) {
				return
			}
			// The connection failed (go-redis dropped it and dials a
			// new one on the next read) or cannot be made.
			if failures++; failures > 1 {
				time.Sleep(readRetryPause)
			}
			continue
		}
		failures = 0
		switch m := m.(type) {
		case *redis.Message:
			n.deliver(m.Payload)
		case *redis.Subscription:
			n.mu.Lock()
			switch m.Kind {
			case "subscribe":
				n.ready = n.subscribed && !n.closed
				n.pokeAllLocked()
			case "unsubscribe":
				n.ready = false
			}
			n.mu.Unlock()
		}
	}
}

// deliver passes a hand-off message, "<lock id> <fence> <expiresAtMs>",
// to its waiter (handOver); one that does not parse is dropped.
func (n *notifier) deliver(payload string) {
	id, rest, ok1 := strings.Cut(payload, " ")
	fence, expStr, ok2 := strings.Cut(rest, " ")
	exp, err := strconv.ParseInt(expStr, 10, 64)
	if !ok1 || !ok2 || err != nil {
		return
	}
	n.handOver(id, fence, exp, false)
}

// handOver passes the lease a release handed to waiter id (fence,
// expiring at exp, server ms) to that waiter: from a message (deliver), or
// from the reply of this Backend's own Release (release.lua tells it,
// instead of publishing, when the waiter is its own). A lease for a waiter
// that has left (it lost the race with the release; its Leave releases
// the lease) or that cannot be described is dropped: the waiter's next
// attempt reports it.
//
// fromReply tells the lease came from this Backend's own release: the
// lock stayed in the process (local.go).
func (n *notifier) handOver(id, fence string, exp int64, fromReply bool) {
	// Every send on w.ch is made under n.mu without blocking (this, and
	// pokeAllLocked's), and the waiter only receives: after taking a
	// pending request for an attempt out, the send cannot block.
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.waiters[id]
	if w == nil {
		return
	}
	l, err := w.b.grantedLease(w.norm, id, fence, exp, w.ttl)
	if err != nil {
		return
	}
	n.unparkLocked(w)
	if w.n == 0 && w.b.quantum > 0 && w.lockKey != "" {
		n.holdLocked(w.lockKey, id, l.ExpiresAt, !fromReply)
	}
	select {
	case w.ch <- l:
	default:
		select {
		case <-w.ch:
		default:
		}
		w.ch <- l
	}
}

// pokeAllLocked asks every registered waiter for an attempt at once.
func (n *notifier) pokeAllLocked() {
	for _, w := range n.waiters {
		pokeLocked(w)
	}
}

// subscribe sends the SUBSCRIBE when asked; and every subscriptionIdle a
// PING when the connection was silent for pingAfter, and the UNSUBSCRIBE
// when no waiter was registered for subscriptionIdle; until Close.
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
			n.mu.Lock()
			send := !n.subscribed && !n.closed
			n.subscribed = n.subscribed || send
			n.mu.Unlock()
			if send {
				// An error means the connection is down: go-redis
				// subscribes the channels it holds when it reconnects,
				// and the confirmation makes the waiters queue.
				_ = n.pubsub.Subscribe(ctx, n.channel)
			}
		case now := <-ticker.C:
			if now.Sub(time.Unix(0, n.lastRead.Load())) >= n.pingAfter {
				// Silence: ask for a pong (any message will do).
				_ = n.pubsub.Ping(ctx)
			}
			n.mu.Lock()
			send := n.subscribed && !n.closed && len(n.waiters) == 0 && now.Sub(n.lastUse) >= subscriptionIdle
			if send {
				n.subscribed, n.ready = false, false
			}
			n.mu.Unlock()
			if send {
				_ = n.pubsub.Unsubscribe(ctx, n.channel)
			}
		}
	}
}
