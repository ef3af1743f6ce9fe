package redisbackend

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

var _ lock.BatchExtender = (*Backend)(nil)

// pipeliner is what ExtendBatch needs beyond redis.Scripter to send a
// batch in one round trip; *redis.Client, *redis.ClusterClient and
// *redis.Ring have it (a cluster pipeline takes one round trip per node).
type pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// ExtendBatch implements lock.BatchExtender, so that lock.Keep keeps all
// the leases of this Backend alive from one goroutine: it runs the extend
// script for every request in one pipeline of EVALSHA (one round trip;
// NOSCRIPT, after a server restart or SCRIPT FLUSH, reloads the script and
// resends those requests once). results[i] has the meaning of
// Extend(ctx, reqs[i].ID, reqs[i].TTL): a malformed id or TTL gets an
// InvalidArgument error and is not sent. With a client that cannot
// pipeline, it calls Extend for each request in turn.
func (b *Backend) ExtendBatch(ctx context.Context, reqs []lock.ExtendRequest) []lock.ExtendResult {
	const op = "extend"
	res := make([]lock.ExtendResult, len(reqs))
	if err := checkCtx(op, ctx); err != nil {
		for i := range res {
			res[i].Err = err
		}
		return res
	}
	p, ok := b.client.(pipeliner)
	if !ok {
		for i, r := range reqs {
			res[i].ExpiresAt, res[i].Err = b.Extend(ctx, r.ID, r.TTL)
		}
		return res
	}
	// Validate everything before any I/O; only valid requests are sent.
	type sendReq struct {
		i     int // index in reqs and res
		idKey string
		ttlMs int64
	}
	send := make([]sendReq, 0, len(reqs))
	for i, r := range reqs {
		idKey, err := b.idKey(op, r.ID)
		if err != nil {
			res[i].Err = err
			continue
		}
		ttlMs, err := validTTL(op, r.TTL)
		if err != nil {
			res[i].Err = err
			continue
		}
		send = append(send, sendReq{i: i, idKey: idKey, ttlMs: ttlMs})
	}
	run := func(batch []sendReq) []*redis.Cmd {
		cmds := make([]*redis.Cmd, len(batch))
		// The per-command errors are read below; the returned one is the
		// first of them.
		_, _ = p.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for j, s := range batch {
				cmds[j] = pipe.EvalSha(ctx, extendScript.Hash(), []string{s.idKey}, reqs[s.i].ID, toleranceArg, s.ttlMs)
			}
			return nil
		})
		return cmds
	}
	if len(send) == 0 {
		return res
	}
	cmds := run(send)
	var again []sendReq
	for j, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			again = append(again, send[j])
			continue
		}
		res[send[j].i].ExpiresAt, res[send[j].i].Err = extendReply(ctx, op, c.Val(), c.Err())
	}
	if len(again) > 0 {
		// The server lost its script cache (restart, failover, SCRIPT
		// FLUSH): load the script and resend those requests once.
		if err := extendScript.Load(ctx, b.client).Err(); err != nil {
			err = mapError(ctx, op, err)
			for _, s := range again {
				res[s.i].Err = err
			}
			return res
		}
		for j, c := range run(again) {
			res[again[j].i].ExpiresAt, res[again[j].i].Err = extendReply(ctx, op, c.Val(), c.Err())
		}
	}
	return res
}

// extendReply interprets one reply of the extend script as Extend does
// (v and err as a redis.Cmd holds them).
func extendReply(ctx context.Context, op string, v interface{}, err error) (time.Time, error) {
	if err != nil {
		return time.Time{}, mapError(ctx, op, err)
	}
	switch r := v.(type) {
	case int64:
		return time.Time{}, notHeld(op, r)
	case []interface{}:
		if len(r) == 2 {
			if exp, ok := r[1].(int64); ok && r[0] == int64(1) {
				return msTime(exp), nil
			}
		}
	}
	return time.Time{}, internal(op, "unexpected reply from the extend script")
}
