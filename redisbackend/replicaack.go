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

// ReplicaAck makes Acquire wait until N replicas of the primary that took
// the lock have acknowledged it (Redis WAIT N Timeout) before returning the
// lease. The zero value turns it off.
//
// What it buys: on a failover (Sentinel, or a Redis Cluster master dying),
// Redis promotes a replica. Replication is asynchronous, so without the
// acknowledgement a replica may be promoted before it received the last
// INCR of a fence counter, and the new primary hands out that fence a second
// time (and a lock that was just granted may vanish). With N >= 1, and with
// every replica that can be promoted among the N (N = the number of
// replicas, or Sentinel/cluster settings that only promote up-to-date
// replicas), a fence that Acquire returned is on the promoted replica, so
// fences handed out after the failover are strictly greater.
//
// What it does not buy: WAIT is not consensus. A lock whose acquire was
// acknowledged can still be lost in a failover if the acknowledging replica
// is not the one promoted, and a partitioned old primary keeps accepting
// writes until it notices (min-replicas-to-write limits that). Fences, not
// the lock alone, are what protect a resource.
//
// What it costs: one more command in the same round trip (EVALSHA and WAIT
// are pipelined on one connection, because WAIT only waits for the writes
// of its own connection), plus the replication delay, which is the extra
// latency of every Acquire; throughput per connection drops accordingly.
// When fewer than N replicas acknowledge within Timeout, Acquire releases
// the lock it just took and fails with lock.CodeServiceUnavailable (the
// fence counter still advanced, which is harmless: fences only need to grow).
//
// It needs a client that can pipeline to one node: a *redis.Client
// (including redis.NewFailoverClient and a single-node UniversalClient) or
// a *redis.ClusterClient (the pipeline goes to the master of the lock's
// slot; a MOVED reply reloads the slot map and retries once). New rejects
// it for other clients (e.g. *redis.Ring). Timeout must be positive and
// below the client's ReadTimeout, since the pipeline reads WAIT's reply
// within that.
type ReplicaAck struct {
	// N is how many replicas must acknowledge the acquire (WAIT's
	// numreplicas); at least 1 when ReplicaAck is on.
	N int
	// Timeout is how long Acquire waits for the N acknowledgements (WAIT's
	// timeout): positive, and below the client's ReadTimeout.
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
	ev, w, err := b.sendAcked(ctx, c.lockKey, acq.args)
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

// sendAcked sends the acquire command args and a WAIT in one pipeline to
// the master of lockKey, loading the script on NOSCRIPT and following a
// MOVED (each at most twice). err is an error before the pipeline ran;
// the script's own error is ev's.
func (b *Backend) sendAcked(ctx context.Context, lockKey string, args []any) (ev, w *redis.Cmd, err error) {
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
		ev = redis.NewCmd(ctx, args...)
		// Per-command errors are read by the caller.
		_, _ = n.Pipelined(ctx, func(p redis.Pipeliner) error {
			_ = p.Process(ctx, ev)
			w = p.Do(ctx, "wait", b.ack.N, b.ack.Timeout.Milliseconds())
			return nil
		})
		err := ev.Err()
		if redis.HasErrorPrefix(err, "NOSCRIPT") && try < 2 {
			if err := acquireScript.Load(ctx, n).Err(); err != nil {
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
