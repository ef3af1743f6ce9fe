package redisbackend

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/internal/errmap"
)

// Hand-off notifications. Each Backend subscribes to a channel of its own,
// "<prefix>:waiter:<random>", while it has queued waiters. A release that
// hands a lock to a waiter publishes the lease there, so it wakes one
// process only. Until Redis confirms the subscription, waiters do not
// queue; the confirmation asks each of them for an attempt, which queues
// it. docs/waiting.md has the protocol.

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
	// subscriber: PUBLISH counts them only in the single layout.
	live bool

	mu         sync.Mutex
	started    bool
	closed     bool
	pubsub     *redis.PubSub // set with started
	done       chan struct{} // closed when the dispatcher and subscriber exit
	kick       chan struct{} // capacity 1: a (un)subscription to send, or closed
	waiters    map[string]*queueWaiter
	subscribed bool                 // SUBSCRIBE sent (and no UNSUBSCRIBE since)
	ready      bool                 // Redis confirmed the subscription
	lastUse    time.Time            // when a waiter last registered or left
	watches    map[string]*keyWatch // leader channels and their watchers (election.go)

	// local and localIDs: the keys held by this Backend's waiters' leases,
	// with the waiters parked behind them, by lock key and by lease id.
	local    map[string]*localKey
	localIDs map[string]string
	tracked  atomic.Int64 // len(localIDs), read without the lock by every Release

	lastRead  atomic.Int64  // when the dispatcher last read (UnixNano)
	pingAfter time.Duration // pingAfter, or a test's; fixed before the subscriber starts

	log    *slog.Logger
	denied sync.Once // warns that the user may not subscribe, once
	// refused says Redis refused the user a subscription (its ACL rule):
	// the notifier is then not usable, and waiters and watchers poll.
	refused bool
}

// newNotifier returns the notifier of a Backend on client. It subscribes
// only when a waiter needs it. With disabled, waiters poll.
func newNotifier(client redis.UniversalClient, prefix string, disabled, live bool, log *slog.Logger) *notifier {
	n := &notifier{
		channel:   prefix + ":waiter:" + lockdriver.NewLockID(),
		live:      live,
		waiters:   map[string]*queueWaiter{},
		pingAfter: pingAfter,
		log:       log,
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
	return !n.closed && !n.refused
}

// isReady reports whether Redis confirmed the subscription.
func (n *notifier) isReady() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ready && !n.closed
}

// register adds w, which is about to attempt, to the waiters hand-offs are
// delivered to. It reports whether w's attempt may queue: not before the
// subscription is confirmed, nor after Close.
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
// candidate: its id may hold the lease that release granted.
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

// Close stops the hand-off subscription; waiters then poll. It does not
// close the Redis client, and the Backend keeps working. It is idempotent
// and safe to call concurrently. It returns the subscription's close error.
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
	n.resyncLocked("")
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

// run starts the subscriber and runs the dispatcher. It passes every
// hand-off to its waiter, and asks every waiter for an attempt when Redis
// confirms a subscription.
//
// It reads with PubSub.Receive, not PubSub.Channel, to spare two goroutine
// wake-ups per hand-off on a hot key. Like Channel, it PINGs a silent
// connection and pauses between failed reads.
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
			if errmap.IsDenied(err) {
				// Redis refused the SUBSCRIBE: an answer, not a failure.
				// Waiters never queue and poll instead.
				n.warnDenied(err)
				continue
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
			if m.Channel != n.channel {
				n.notice(m.Channel, m.Payload) // a leader channel's
				continue
			}
			n.deliver(m.Payload)
		case *redis.Subscription:
			n.mu.Lock()
			switch {
			case m.Channel != n.channel:
				// A leader channel's: notices may have been missed.
				if m.Kind == "subscribe" {
					n.resyncLocked(m.Channel)
				}
			case m.Kind == "subscribe":
				n.ready = n.subscribed && !n.closed
				n.pokeAllLocked()
			case m.Kind == "unsubscribe":
				n.ready = false
			}
			n.mu.Unlock()
		}
	}
}

// warnDenied logs, once, that Redis refused the user a subscription, so
// waiters poll and leader notices are not heard.
func (n *notifier) warnDenied(err error) {
	n.mu.Lock()
	n.refused = true
	n.mu.Unlock()
	n.denied.Do(func() {
		n.log.Warn("syncguard: the Redis user may not subscribe to this Backend's channels, so waiters poll instead of being handed the lock and leader notices are not heard; grant +subscribe, +unsubscribe and the channels &<prefix>:* ("+errmap.ACLDoc+")",
			"channel", n.channel, "error", err)
	})
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

// handOver passes the lease a release handed to waiter id to that waiter.
// The lease comes from a message, or from the reply of this Backend's own
// Release (fromReply: the lock stayed in the process). A lease for a waiter
// that left is dropped; the waiter's Leave releases it.
func (n *notifier) handOver(id, fence string, exp int64, fromReply bool) {
	// Every send on w.ch is made under n.mu, and the waiter only receives:
	// once a pending request is taken out, the send cannot block.
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
	if w.plain() && w.b.quantum > 0 && w.lockKey != "" {
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

// subscribe sends SUBSCRIBE when asked, PING on a silent connection, and
// UNSUBSCRIBE when no waiter was registered for subscriptionIdle.
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
			// A kick may be a watcher's (election.go): the hand-off
			// channel is for waiters.
			send := !n.subscribed && !n.closed && len(n.waiters) > 0
			n.subscribed = n.subscribed || send
			n.mu.Unlock()
			if send {
				// An error means the connection is down: go-redis
				// subscribes the channels it holds when it reconnects,
				// and the confirmation makes the waiters queue.
				_ = n.pubsub.Subscribe(ctx, n.channel)
			}
			n.syncWatches(ctx)
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
