package redisbackend

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Release frees the lease id. It returns a *lockdriver.NotHeldError (matching
// lock.ErrNotHeld) when the lease is gone, expired or not the owner of
// its key; nothing is deleted then.
func (b *Backend) Release(ctx context.Context, id string) error {
	const op = "release"
	if err := checkCtx(op, ctx); err != nil {
		return err
	}
	idKey, err := b.idKey(op, id)
	if err != nil {
		return err
	}
	rc := b.newReleaseCall(idKey, id)
	reply, err := b.run(ctx, rc.cmd).Result()
	return b.endRelease(ctx, rc, reply, err)
}

// releaseCall is one release: its script call, and what it told the
// script of this Backend's waiters (local.go).
type releaseCall struct {
	cmd     scriptCmd
	id      string
	lockKey string       // the key's lock key when locality is tracked, else ""
	cand    *queueWaiter // the waiter of this Backend offered the lock, or nil
}

// newReleaseCall returns the release of lease id (idKey its index key).
func (b *Backend) newReleaseCall(idKey, id string) releaseCall {
	rc := releaseCall{id: id}
	var own ownWaiters
	if b.notify != nil && b.notify.sub != nil {
		// A waiter of this Backend is told from the reply, with no message.
		own.channel = b.channelArg
		if b.quantum > 0 {
			// Locality (local.go).
			var young bool
			rc.lockKey, young, rc.cand = b.notify.candidate(id, b.quantum)
			switch {
			case young:
				own.bound = b.localityArg
			case rc.cand != nil:
				own.bound = orderArg
			}
			if rc.cand != nil {
				own.cand = rc.cand.entry
			}
		}
	}
	rc.cmd = b.releaseCmd(idKey, id, own)
	return rc
}

// endRelease reads the reply (or error) of rc's script call and tells the
// Backend's waiters.
func (b *Backend) endRelease(ctx context.Context, rc releaseCall, reply any, err error) error {
	const op = "release"
	var granted string
	if err == nil {
		granted, err = b.released(ctx, op, reply)
	} else {
		err = mapError(ctx, op, err)
	}
	if rc.lockKey != "" {
		b.notify.released(rc.id, rc.lockKey, granted, rc.cand)
	}
	return err
}

// released reads the reply of a release script. granted is the lock id
// of a waiter of this Backend that it handed the lock to, or "".
func (b *Backend) released(ctx context.Context, op string, reply any) (granted string, err error) {
	var n int64
	switch r := reply.(type) {
	case int64:
		n = r
	case []any:
		var code int64
		if len(r) > 0 {
			code, _ = r[0].(int64)
		}
		switch {
		case code == 1 && len(r) == 4: // handed to a waiter of ours
			granted, _ = r[1].(string)
			fence, _ := r[2].(string)
			exp, _ := r[3].(int64)
			b.notify.handOver(granted, fence, exp, true)
			lockdriver.HandedOver(ctx, lock.Fence(fence))
		case code == 2 && len(r) == 2: // handed to another process's waiter
			fence, _ := r[1].(string)
			lockdriver.HandedOver(ctx, lock.Fence(fence))
		default:
			return "", internal(op, "unexpected reply from the release script")
		}
		n = 1
	default:
		return "", internal(op, "unexpected reply from the release script")
	}
	if n == 1 {
		return granted, nil
	}
	return "", notHeld(op, n)
}

// ownWaiters is what a release tells release.lua of its own Backend's
// waiters; each nil or "" when not sent.
type ownWaiters struct {
	channel, bound any
	cand           string
}

// release runs the release script for lease id (idKey its index key);
// a hand-off it makes is published, even to a waiter of b.
func (b *Backend) release(ctx context.Context, idKey, id string) *redis.Cmd {
	return b.run(ctx, b.releaseCmd(idKey, id, ownWaiters{}))
}

// releaseCmd is the release script's call: KEYS index key; ARGV lock id,
// tombstone ttl in ms, nonce, queue key start, then what own holds.
func (b *Backend) releaseCmd(idKey, id string, own ownWaiters) scriptCmd {
	s := releaseScript
	if b.layout == LayoutCluster {
		s = releaseClusterScript
	}
	switch {
	case own.channel == nil:
		return s.cmd(1, idKey, id, b.tombArg, b.nonce(), b.queueArg)
	case own.bound == nil:
		return s.cmd(1, idKey, id, b.tombArg, b.nonce(), b.queueArg, own.channel)
	case own.cand == "":
		return s.cmd(1, idKey, id, b.tombArg, b.nonce(), b.queueArg, own.channel, own.bound)
	}
	return s.cmd(1, idKey, id, b.tombArg, b.nonce(), b.queueArg, own.channel, own.bound, own.cand)
}

// releaseAbandoned releases lease id, which the caller will not hand out,
// in the background for up to ttl, after which the lock is gone anyway.
func (b *Backend) releaseAbandoned(ctx context.Context, idKey, id string, ttl time.Duration) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(ttl, lockdriver.DefaultReleaseTimeout))
	defer cancel()
	untilAnswered(rctx, func(ctx context.Context) error { return b.release(ctx, idKey, id).Err() })
}

// untilAnswered runs f, a clean-up call nobody waits for, until it
// succeeds, fails for good, or ctx ends (lockdriver.RetryCleanup): go-redis's own
// retries can end before a stalled or restarting server is back. Every
// transient answer is tried again (transient), a restarting server's
// LOADING included.
func untilAnswered(ctx context.Context, f func(context.Context) error) {
	lockdriver.RetryCleanup(ctx, f, func(err error) bool { return transient(ctx, err) })
}
