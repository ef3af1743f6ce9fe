package redisbackend

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

var _ multilock.Backend = (*Backend)(nil)

// acquireMultiScript takes the keys of one slot, all or none.
var acquireMultiScript = newScript("prelude", "lib", "acquire_multi")

// Group implements multilock.Backend: keys of one group share a hash slot,
// so one script takes them. In the single layout every key is of one
// group; in the cluster layout a key's group is its hash tag, which keys
// sharing a Redis hash tag ("{acct}:1", "{acct}:2") share.
func (b *Backend) Group(key string) (string, error) {
	_, lockKey, err := b.lockKey("acquire", key)
	if err != nil || b.layout != LayoutCluster {
		return "", err
	}
	return b.lockTag(lockKey), nil
}

// AcquireMulti implements multilock.Backend: one attempt to take every
// key of one group, keys[i] with lock id ids[i], all or none, in one
// script. A key whose live lease has its id keeps that lease, so the
// call is safe to repeat; once such a lease was released, it fails with
// an error matching lock.ErrNotHeld and takes nothing. With
// Options.ReplicaAck it fails with an error matching
// errors.ErrUnsupported (multilock then takes the keys one by one).
func (b *Backend) AcquireMulti(ctx context.Context, keys, ids []string, ttl time.Duration) ([]lock.Lease, error) {
	calls, err := b.newMultiCall(ctx, keys, ids, ttl)
	if err != nil {
		return nil, err
	}
	args := make([]any, 0, 5*len(calls)+2)
	for _, c := range calls {
		args = append(args, c.lockKey, b.indexKey(c.id), c.fenceKey)
	}
	args = append(args, calls[0].ttlMs, b.stripedArg)
	for _, c := range calls {
		args = append(args, c.id, wire.JSONText(c.norm))
	}
	reply, err := b.run(ctx, acquireMultiScript.cmd(3*len(calls), args...)).Result()
	if err != nil {
		return nil, mapError(ctx, "acquire", err)
	}
	return b.multiLeases(calls, reply, ttl)
}

// newMultiCall validates AcquireMulti's arguments before any I/O.
func (b *Backend) newMultiCall(ctx context.Context, keys, ids []string, ttl time.Duration) ([]acquireCall, error) {
	const op = "acquire"
	switch {
	case len(keys) == 0 || len(keys) > multilock.MaxKeys:
		return nil, lockdriver.InvalidArgument(op, "between 1 and "+strconv.Itoa(multilock.MaxKeys)+" keys")
	case len(ids) != len(keys):
		return nil, lockdriver.InvalidArgument(op, "one lock id per key")
	case b.ack.N > 0:
		return nil, &lock.Error{Code: lock.CodeInvalidArgument, Op: op,
			Msg: "AcquireMulti is not available with Options.ReplicaAck", Err: errors.ErrUnsupported}
	}
	calls := make([]acquireCall, len(keys))
	seen := make(map[string]bool, len(keys))
	for i, key := range keys {
		if err := lockdriver.ValidateLockID(ids[i]); err != nil {
			return nil, withOp(err, op)
		}
		c, err := b.newAcquireCall(ctx, key, ids[i], ttl)
		if err != nil {
			return nil, err
		}
		if seen[c.norm] {
			return nil, lockdriver.InvalidArgument(op, "duplicate key at index "+strconv.Itoa(i)+" (after NFC)")
		}
		seen[c.norm] = true
		if b.layout == LayoutCluster && i > 0 && b.lockTag(c.lockKey) != b.lockTag(calls[0].lockKey) {
			return nil, lockdriver.InvalidArgument(op, "keys of different groups (hash tags) in one AcquireMulti")
		}
		calls[i] = c
	}
	return calls, nil
}

// multiLeases reads the reply of acquire_multi.lua for calls: the leases,
// or the outcome that is not a grant as the error.
func (b *Backend) multiLeases(calls []acquireCall, reply any, ttl time.Duration) ([]lock.Lease, error) {
	const op = "acquire"
	res, _ := reply.([]any)
	if len(res) < 2 {
		return nil, internal(op, "unexpected reply from the acquire_multi script")
	}
	status, _ := res[0].(int64)
	switch {
	case status == 0 && len(res) >= 4:
		exp, _ := res[1].(int64)
		at, _ := res[3].(int64)
		if at < 0 || int(at) >= len(calls) {
			return nil, internal(op, "unexpected key index from the acquire_multi script")
		}
		e := &multilock.BusyError{Index: int(at)}
		if exp > 0 {
			e.ExpiresAt = msTime(exp)
		}
		return nil, e
	case status == -3:
		return nil, internal(op, "fence counter exceeded "+string(wire.FenceMax)+"; rotate to a new key (no lock was taken)")
	case status == -4:
		return nil, &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
	case status != 1 || len(res) != len(calls)+1:
		return nil, internal(op, "unexpected reply from the acquire_multi script")
	}
	leases := make([]lock.Lease, len(calls))
	for i, c := range calls {
		data, _ := res[i+1].(string)
		fence, exp, ok := wire.DecodeGrant(data)
		if !ok {
			return nil, internal(op, "unexpected lock data from the acquire_multi script")
		}
		l, err := b.grantedLease(c.norm, c.id, fence, exp, ttl)
		if err != nil {
			return nil, withOp(err, op)
		}
		leases[i] = l
	}
	return leases, nil
}

// ReleaseMulti implements multilock.Backend: it releases every lease of
// ids in one pipeline (one round trip; one per master on Redis Cluster),
// each as Release does, hand-offs to waiters included. errs[i] is the
// result for ids[i]; a malformed id gets an InvalidArgument error and is
// not sent.
func (b *Backend) ReleaseMulti(ctx context.Context, ids []string) []error {
	const op = "release"
	errs := make([]error, len(ids))
	if err := checkCtx(op, ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	var calls []releaseCall
	var cmds []scriptCmd
	var at []int
	for i, id := range ids {
		idKey, err := b.idKey(op, id)
		if err != nil {
			errs[i] = err
			continue
		}
		rc := b.newReleaseCall(idKey, id)
		calls, cmds, at = append(calls, rc), append(cmds, rc.cmd), append(at, i)
	}
	if len(cmds) == 0 {
		return errs
	}
	// The whole pipeline ends by ctx (transport.Bounded); the background
	// part writes only out.
	var sent []*redis.Cmd
	out := make([]*redis.Cmd, len(cmds))
	if err := transport.Bounded(ctx, func(ctx context.Context) { sent = b.runPipelined(ctx, cmds) }); err != nil {
		for k := range out {
			out[k] = redis.NewCmd(ctx)
			out[k].SetErr(err)
		}
	} else {
		copy(out, sent)
	}
	for k, c := range out {
		reply, err := c.Result()
		errs[at[k]] = b.endRelease(ctx, calls[k], reply, err)
	}
	return errs
}
