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
// Every change is one Lua script, safe to run twice; every call returns
// by its context's deadline. The keys are the TypeScript syncguard
// library's, so Go and Node services exclude each other.
//
// Redis replicates asynchronously: after a failover a lock can vanish and
// a fence repeat, unless Options.ReplicaAck waits for replicas. A jump of
// the server's clock shortens or lengthens leases.
// docs/redis-keys.md, docs/cluster.md, docs/client-retries.md and
// docs/waiting.md explain the rest.
package redisbackend
