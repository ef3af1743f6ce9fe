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
// pipeline, resends once those the server answered NOSCRIPT, and writes
// out[j], the result of send[j].
func (b *Backend) extendBatch(ctx context.Context, send []batchReq, out []lock.ExtendResult) {
	const op = "extend"
	run := func(idx []int) []*redis.Cmd {
		cmds := make([]*redis.Cmd, len(idx))
		// The per-command errors are read below; the returned one is the
		// first of them.
		_, _ = b.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for k, j := range idx {
				s := send[j]
				cmds[k] = redis.NewCmd(ctx, b.extendCmd(s.idKey, s.id, s.ttlMs).args...)
				cmds[k].SetFirstKeyPos(3)
				_ = pipe.Process(ctx, cmds[k])
			}
			return nil
		})
		return cmds
	}
	all := make([]int, len(send))
	for j := range all {
		all[j] = j
	}
	var again []int
	for k, c := range run(all) {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			again = append(again, k)
			continue
		}
		out[k].ExpiresAt, out[k].Err = extendReply(ctx, op, c.Val(), c.Err())
	}
	if len(again) == 0 {
		return
	}
	// The server lost its script cache (restart, failover, SCRIPT FLUSH):
	// load the script and resend those requests once.
	if err := extendScript.Load(ctx, b.client).Err(); err != nil {
		err = mapError(ctx, op, err)
		for _, j := range again {
			out[j].Err = err
		}
		return
	}
	for k, c := range run(again) {
		j := again[k]
		out[j].ExpiresAt, out[j].Err = extendReply(ctx, op, c.Val(), c.Err())
	}
}
