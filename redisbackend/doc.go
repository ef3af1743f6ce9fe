// Package redisbackend stores locks in Redis, through go-redis v9.
//
// It is the lock.Backend most programs use. Give New a client, then pass
// the Backend to lock.Do, lock.Hold or election.Lead:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	backend, err := redisbackend.New(rdb, nil) // keys under the prefix "syncguard"
//	if err != nil {
//		log.Fatal(err)
//	}
//	err = lock.Do(ctx, backend, "invoice:42", func(ctx context.Context, l lock.Lease) error {
//		// ctx ends (cause lock.ErrLeaseLost) if the lease is lost.
//		return store.UpdateInvoice(ctx, 42, paid, l.Fence) // the store refuses older fences
//	})
//
// New takes a *redis.Client, a failover (Sentinel) client or a
// *redis.ClusterClient. It refuses a *redis.Ring, which moves keys between
// shards. Every change is one Lua script, judged by the server's clock and
// safe to run twice. Every call returns by its context's deadline.
//
// The keys and values are those of the TypeScript syncguard library. Go
// and Node services on one prefix exclude each other on the same keys.
//
// What it does not guarantee: Redis replicates asynchronously. After a
// failover a lock can vanish and a fence can be handed out twice, unless
// Options.ReplicaAck waits for replicas. A jump of the server's clock
// shortens or lengthens leases.
//
// The docs/ pages in the repository explain the rest: docs/redis-keys.md
// the keys, docs/cluster.md Cluster, Sentinel and ReplicaAck,
// docs/client-retries.md retries and deadlines, docs/waiting.md the queue.
package redisbackend
