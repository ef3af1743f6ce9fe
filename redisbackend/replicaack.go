package redisbackend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// ReplicaAck makes Acquire wait until N replicas have acknowledged the
// lock, with Redis's WAIT, before it returns the lease. The zero value
// turns it off.
//
// It keeps fences growing across a failover, if an acknowledging replica
// is promoted. It does not keep the lock itself: WAIT is not consensus.
// When fewer than N replicas acknowledge within Timeout, Acquire releases
// the lock and fails with lock.CodeServiceUnavailable. It needs a
// *redis.Client, a failover client or a *redis.ClusterClient.
// docs/cluster.md has what it buys and costs.
type ReplicaAck struct {
	// N is how many replicas must acknowledge the acquire: at least 1.
	N int
	// Timeout is how long Acquire waits for them: positive, and below the
	// client's ReadTimeout.
	Timeout time.Duration
}

// checkReplicaAck validates a for client. It needs the concrete go-redis
// type: acquireAcked pipelines to one node of it.
func checkReplicaAck(a ReplicaAck, client redis.UniversalClient) error {
	if a.N == 0 && a.Timeout == 0 {
		return nil
	}
	if a.N <= 0 || a.Timeout <= 0 {
		return lockdriver.InvalidArgument("config", "ReplicaAck needs N >= 1 and a positive Timeout")
	}
	var rt time.Duration
	switch c := client.(type) {
	case *redis.Client:
		rt = c.Options().ReadTimeout
	case *redis.ClusterClient:
		rt = c.Options().ReadTimeout
	default:
		return lockdriver.InvalidArgument("config", "ReplicaAck needs a *redis.Client (also a failover client) or a *redis.ClusterClient, to pipeline EVALSHA and WAIT on one connection")
	}
	if rt > 0 && a.Timeout >= rt {
		return lockdriver.InvalidArgument("config", "ReplicaAck.Timeout must be below the client's ReadTimeout ("+rt.String()+")")
	}
	return nil
}

// runAcquireAcked runs acq, the acquire script's call for c, followed by
// WAIT, bounded by ctx (transport.Bounded).
func (b *Backend) runAcquireAcked(ctx context.Context, c acquireCall, acq scriptCmd) *redis.Cmd {
	var res *redis.Cmd
	if err := transport.Bounded(ctx, func(ctx context.Context) { res = b.acquireAcked(ctx, c, acq) }); err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	return res
}

func (b *Backend) acquireAcked(ctx context.Context, c acquireCall, acq scriptCmd) *redis.Cmd {
	failed := func(err error) *redis.Cmd {
		r := redis.NewCmd(ctx)
		r.SetErr(err)
		return r
	}
	ev, w, err := b.sendAcked(ctx, c.lockKey, acq)
	if err != nil {
		return failed(err)
	}
	if ev.Err() != nil {
		return ev
	}
	if _, granted := ev.Val().(string); !granted {
		return ev // not acquired (acquire.lua answers a grant with its lock data): no write to wait for
	}
	acked, err := w.Int64()
	if err == nil && acked >= int64(b.ack.N) {
		return ev
	}
	// The lock was taken but not acknowledged: do not hand it out.
	b.releaseAbandoned(ctx, b.indexKey(c.id), c.id, lockdriver.DefaultReleaseTimeout)
	if err != nil {
		err = fmt.Errorf("%w: %w", errNotAcked, err)
	} else {
		err = errNotAcked
	}
	return failed(&lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire",
		Msg: fmt.Sprintf("only %d of %d replicas acknowledged the acquire within %v; the lock was released", acked, b.ack.N, b.ack.Timeout), Err: err})
}

// sendAcked sends the acquire command acq and a WAIT in one pipeline to the
// master of lockKey. It loads the script on NOSCRIPT and follows a MOVED,
// each at most twice. err is an error before the pipeline ran.
func (b *Backend) sendAcked(ctx context.Context, lockKey string, acq scriptCmd) (ev, w *redis.Cmd, err error) {
	cc, isCluster := b.client.(*redis.ClusterClient)
	for try := 0; ; try++ {
		n, ok := b.client.(*redis.Client)
		if isCluster {
			if n, err = cc.MasterForKey(ctx, lockKey); err != nil {
				return nil, nil, err
			}
		} else if !ok {
			return nil, nil, internal("acquire", "ReplicaAck needs a *redis.Client or a *redis.ClusterClient")
		}
		ev = redis.NewCmd(ctx, acq.args...)
		// Per-command errors are read by the caller.
		_, _ = n.Pipelined(ctx, func(p redis.Pipeliner) error {
			_ = p.Process(ctx, ev)
			w = p.Do(ctx, "wait", b.ack.N, b.ack.Timeout.Milliseconds())
			return nil
		})
		err := ev.Err()
		if redis.HasErrorPrefix(err, "NOSCRIPT") && try < 2 {
			if err := acq.s.Load(ctx, n).Err(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if _, moved := redis.IsMovedError(err); moved && isCluster && try < 2 {
			cc.ReloadState(ctx)
			continue
		}
		return ev, w, nil
	}
}

// errNotAcked is in the chain of the error of an acquisition that replicas
// did not acknowledge: it was released before the error was returned.
var errNotAcked = errors.New("redisbackend: replicas did not acknowledge the acquisition")
