package redisbackend

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Leader elections (lock/election). A term is a lease of the key, and the
// leader's identity is the member "owner" of its lock data. Each key has a
// channel of leader notices, wire.LeaderChannel, read on the Backend's one
// subscription connection. docs/election.md and docs/redis-keys.md have
// the notices' format.

// proclaimScript stores a term's owner and publishes its notice.
var proclaimScript = newScript("prelude", "proclaim")

// Proclaim stores identity as the owner of the live term (lease) term and
// publishes a notice of it on the key's leader channel. It returns an
// error matching lock.ErrNotHeld when term is not the key's live lease.
func (b *Backend) Proclaim(ctx context.Context, term lock.Lease, identity string) error {
	const op = "proclaim"
	if err := checkCtx(op, ctx); err != nil {
		return err
	}
	if identity == "" || !utf8.ValidString(identity) {
		return lockdriver.InvalidArgument(op, "identity must be non-empty UTF-8")
	}
	if err := lockdriver.ValidateLockID(term.ID); err != nil {
		return withOp(err, op)
	}
	_, lockKey, err := b.lockKey(op, term.Key)
	if err != nil {
		return err
	}
	res, err := b.run(ctx, proclaimScript.cmd(1, lockKey, term.ID, identity, wire.LeaderChannel(b.prefix, lockKey))).Int64()
	if err != nil {
		return mapError(ctx, op, err)
	}
	switch res {
	case 1:
		return nil
	case 0:
		return &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotOwner}
	default:
		return &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
	}
}

// LookupOwner describes the live lease on key and returns the identity
// stored with it, or "". info is nil when the key is free.
func (b *Backend) LookupOwner(ctx context.Context, key string) (identity string, info *lock.Info, err error) {
	const op = "lookup"
	if err := checkCtx(op, ctx); err != nil {
		return "", nil, err
	}
	_, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return "", nil, err
	}
	d, err := b.lookupData(ctx, op, lookupKeyCmd(lockKey))
	if d == nil {
		return "", nil, err
	}
	return d.Owner, infoOf(d), nil
}

// Announce publishes the notice that term ended, after its release, so
// that watchers look at the key at once rather than at its expiry.
func (b *Backend) Announce(ctx context.Context, term lock.Lease) error {
	const op = "announce"
	if err := checkCtx(op, ctx); err != nil {
		return err
	}
	if _, err := lockdriver.ParseFence(string(term.Fence)); err != nil {
		return withOp(err, op)
	}
	_, lockKey, err := b.lockKey(op, term.Key)
	if err != nil {
		return err
	}
	// Through the sender, to return by ctx's deadline on a stalled server.
	if err := b.send(ctx, []any{"publish", wire.LeaderChannel(b.prefix, lockKey), wire.EndNotice(term.Fence)}).Err(); err != nil {
		return mapError(ctx, op, err)
	}
	return nil
}

// Watch calls notify with every leader notice of key: a term's fence,
// expiry and owner. A zero expiresAt means the term ended. An empty fence
// means notices may have been missed, and the watcher must read the key.
// notify runs on the Backend's dispatcher goroutine: it must return at once
// and must not call the Backend. stop ends the watch. Watch returns an
// error matching errors.ErrUnsupported when this Backend cannot subscribe;
// the caller then polls.
func (b *Backend) Watch(key string, notify func(fence lock.Fence, expiresAt time.Time, identity string)) (stop func(), err error) {
	const op = "watch"
	if notify == nil {
		return nil, lockdriver.InvalidArgument(op, "notify is nil")
	}
	_, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return nil, err
	}
	if !b.notify.usable() {
		return nil, fmt.Errorf("redisbackend: leader notices are off (notifications disabled, ReplicaAck, no Subscribe, or closed): %w", errors.ErrUnsupported)
	}
	return b.notify.watch(wire.LeaderChannel(b.prefix, lockKey), notify)
}

// keyWatch is the watchers of one leader channel.
type keyWatch struct {
	fns  map[*noticeFunc]struct{}
	sent bool // SUBSCRIBE sent (and no UNSUBSCRIBE since)
}

// noticeFunc is one watcher's function (a pointer, to tell watchers apart).
type noticeFunc struct {
	fn func(fence lock.Fence, expiresAt time.Time, identity string)
}

// watch adds fn to the watchers of channel ch and has the subscriber
// subscribe it.
func (n *notifier) watch(ch string, fn func(lock.Fence, time.Time, string)) (stop func(), err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("redisbackend: closed: %w", errors.ErrUnsupported)
	}
	if n.watches == nil {
		n.watches = map[string]*keyWatch{}
	}
	w := n.watches[ch]
	if w == nil {
		w = &keyWatch{fns: map[*noticeFunc]struct{}{}}
		n.watches[ch] = w
	}
	f := &noticeFunc{fn: fn}
	w.fns[f] = struct{}{}
	n.startLocked()
	n.kickLocked()
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if _, ok := w.fns[f]; ok {
			delete(w.fns, f)
			n.kickLocked()
		}
	}, nil
}

// kickLocked asks the subscriber to send the (un)subscriptions due.
func (n *notifier) kickLocked() {
	if n.kick == nil || n.closed {
		return
	}
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// watchChangesLocked returns the leader channels to subscribe and to
// unsubscribe, and marks them so.
func (n *notifier) watchChangesLocked() (sub, unsub []string) {
	for ch, w := range n.watches {
		switch {
		case len(w.fns) > 0 && !w.sent:
			w.sent = true
			sub = append(sub, ch)
		case len(w.fns) == 0 && w.sent:
			w.sent = false
			unsub = append(unsub, ch)
		case len(w.fns) == 0:
			delete(n.watches, ch)
		}
	}
	return sub, unsub
}

// syncWatches sends the (un)subscriptions of leader channels due.
func (n *notifier) syncWatches(ctx context.Context) {
	n.mu.Lock()
	sub, unsub := n.watchChangesLocked()
	n.mu.Unlock()
	// An error means the connection is down: go-redis subscribes the
	// channels it holds when it reconnects, and confirms them.
	if len(sub) > 0 {
		_ = n.pubsub.Subscribe(ctx, sub...)
	}
	if len(unsub) > 0 {
		_ = n.pubsub.Unsubscribe(ctx, unsub...)
	}
}

// notice passes a leader notice on channel ch to its watchers; one that
// does not parse is dropped.
func (n *notifier) notice(ch, payload string) {
	fence, ms, owner, ok := wire.DecodeLeaderNotice(payload)
	if !ok {
		return
	}
	var exp time.Time
	if ms > 0 {
		exp = msTime(ms)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.watches[ch]; w != nil {
		for f := range w.fns {
			f.fn(fence, exp, owner)
		}
	}
}

// resyncLocked tells the watchers of ch (every channel when ch is "")
// that notices may have been missed.
func (n *notifier) resyncLocked(ch string) {
	for c, w := range n.watches {
		if ch == "" || c == ch {
			for f := range w.fns {
				f.fn("", time.Time{}, "")
			}
		}
	}
}
