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

// The multi-key scripts: acquire_multi takes the keys of one slot, all or
// none; release_multi runs the release script once per lease of one slot.
var (
	acquireMultiScript        = newScript("prelude", "lib", "acquire_multi")
	releaseMultiScript        = newScript("prelude", "lib", "release_multi_head", "release", "index_swap", "release_lock", "handoff", "release_multi_tail")
	releaseMultiClusterScript = newScript("prelude", "lib", "release_multi_head", "release", "index_read", "release_lock", "handoff", "release_multi_tail")
)

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
// ids, each as Release does (hand-offs to waiters included), the leases of
// one slot in one script and every slot's script in one pipeline: one
// round trip (one per master on Redis Cluster). errs[i] is the result for
// ids[i]; a malformed id gets an InvalidArgument error and is not sent.
func (b *Backend) ReleaseMulti(ctx context.Context, ids []string) []error {
	const op = "release"
	errs := make([]error, len(ids))
	if err := checkCtx(op, ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	var groups []*releaseGroup
	bySlot := map[string]*releaseGroup{}
	for i, id := range ids {
		idKey, err := b.idKey(op, id)
		if err != nil {
			errs[i] = err
			continue
		}
		slot := "" // the single layout: one slot
		if b.layout == LayoutCluster {
			slot = id[:tagLen]
		}
		g := bySlot[slot]
		if g == nil {
			g = &releaseGroup{}
			bySlot[slot] = g
			groups = append(groups, g)
		}
		g.add(i, b.newReleaseCall(idKey, id))
	}
	if len(groups) == 0 {
		return errs
	}
	cmds := make([]scriptCmd, len(groups))
	for k, g := range groups {
		cmds[k] = g.cmd(b.layout)
	}
	// The whole pipeline ends by ctx (transport.Bounded); the background
	// part writes only sent.
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
	for k, g := range groups {
		g.end(ctx, b, out[k], errs)
	}
	return errs
}

// releaseGroup is the releases of ReleaseMulti in one slot: one call of
// release_multi.
type releaseGroup struct {
	at    []int // each release's index in ReleaseMulti's ids
	calls []releaseCall
}

func (g *releaseGroup) add(i int, rc releaseCall) {
	g.at, g.calls = append(g.at, i), append(g.calls, rc)
}

// releaseArgs is the number of ARGV of one release in release_multi.
const releaseArgs = 7

// cmd is the call of release_multi for g: KEYS the index keys; ARGV each
// release's ARGV (releaseCmd's), padded with "" to releaseArgs.
func (g *releaseGroup) cmd(layout Layout) scriptCmd {
	vals := make([]any, 0, len(g.calls)*(1+releaseArgs))
	for _, rc := range g.calls {
		vals = append(vals, rc.cmd.args[3]) // releaseCmd: evalsha, hash, 1, index key, ARGV...
	}
	for _, rc := range g.calls {
		argv := rc.cmd.args[4:]
		vals = append(vals, argv...)
		for range releaseArgs - len(argv) {
			vals = append(vals, "")
		}
	}
	s := releaseMultiScript
	if layout == LayoutCluster {
		s = releaseMultiClusterScript
	}
	return s.cmd(len(g.calls), vals...)
}

// end reads the reply of g's call into errs, and tells the Backend's
// waiters of each release.
func (g *releaseGroup) end(ctx context.Context, b *Backend, cmd *redis.Cmd, errs []error) {
	reply, err := cmd.Result()
	replies, _ := reply.([]any)
	if err == nil && len(replies) != len(g.calls) {
		err = internal("release", "unexpected reply from the release_multi script")
	}
	for k, rc := range g.calls {
		var r any
		rerr := err
		if err == nil {
			r = replies[k]
			if e, ok := r.(error); ok { // an error reply of that release alone
				r, rerr = nil, e
			}
		}
		errs[g.at[k]] = b.endRelease(ctx, rc, r, rerr)
	}
}
