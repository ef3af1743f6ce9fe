package redisbackend

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// ExtendBatch implements lock.IDBackend, so that lock.Keep keeps all the
// leases of this Backend alive from one goroutine. It extends every lease
// in one pipeline: one round trip, one per master on Redis Cluster.
// results[i] means what Extend(ctx, reqs[i].ID, reqs[i].TTL) would. A
// malformed id or TTL gets an InvalidArgument error and is not sent.
func (b *Backend) ExtendBatch(ctx context.Context, reqs []lock.Lease) []lock.ExtendResult {
	const op = "extend"
	res := make([]lock.ExtendResult, len(reqs))
	if err := checkCtx(op, ctx); err != nil {
		for i := range res {
			res[i].Err = err
		}
		return res
	}
	// Validate everything before any I/O; only valid requests are sent.
	send := make([]batchReq, 0, len(reqs))
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
		send = append(send, batchReq{i: i, id: r.ID, idKey: idKey, ttlMs: ttlMs})
	}
	if len(send) == 0 {
		return res
	}
	// The whole batch, NOSCRIPT reload included, ends by ctx
	// (transport.Bounded); the background part writes only out.
	out := make([]lock.ExtendResult, len(send))
	if err := transport.Bounded(ctx, func(ctx context.Context) { b.extendBatch(ctx, send, out) }); err != nil {
		err = mapError(ctx, op, err)
		for _, s := range send {
			res[s.i].Err = err
		}
		return res
	}
	for j, s := range send {
		res[s.i] = out[j]
	}
	return res
}

// batchReq is one validated request of ExtendBatch.
type batchReq struct {
	i     int // index in ExtendBatch's reqs and results
	id    string
	idKey string
	ttlMs int64
}

// extendBatch sends the extend script for every request of send in one
// pipeline and writes out[j], the result of send[j].
func (b *Backend) extendBatch(ctx context.Context, send []batchReq, out []lock.ExtendResult) {
	cmds := make([]scriptCmd, len(send))
	for j, s := range send {
		cmds[j] = b.extendCmd(s.idKey, s.id, s.ttlMs)
	}
	for j, c := range b.runPipelined(ctx, cmds) {
		out[j].ExpiresAt, out[j].Err = extendReply(ctx, "extend", c.Val(), c.Err())
	}
}

// runPipelined sends every script call of cmds in one pipeline (one round
// trip; one per master on Redis Cluster), sends once more those the
// server answered NOSCRIPT after loading their script, and returns the
// replies in order. A failed load is the reply of the calls it was for.
func (b *Backend) runPipelined(ctx context.Context, cmds []scriptCmd) []*redis.Cmd {
	out := make([]*redis.Cmd, len(cmds))
	run := func(idx []int) {
		// The per-command errors are read by the caller; the returned one
		// is the first of them.
		_, _ = b.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, j := range idx {
				out[j] = redis.NewCmd(ctx, cmds[j].args...)
				out[j].SetFirstKeyPos(3)
				_ = pipe.Process(ctx, out[j])
			}
			return nil
		})
	}
	all := make([]int, len(cmds))
	for j := range all {
		all[j] = j
	}
	run(all)
	var again []int
	loaded := map[*script]error{}
	for j, c := range out {
		if !redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			continue
		}
		// The server lost its script cache (restart, failover, SCRIPT
		// FLUSH): load the script and send the call again, once.
		s := cmds[j].s
		if _, done := loaded[s]; !done {
			loaded[s] = s.Load(ctx, b.client).Err()
		}
		if err := loaded[s]; err != nil {
			out[j] = redis.NewCmd(ctx)
			out[j].SetErr(err)
			continue
		}
		again = append(again, j)
	}
	if len(again) > 0 {
		run(again)
	}
	return out
}
