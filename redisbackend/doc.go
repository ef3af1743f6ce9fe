// Package redisbackend implements lock.Backend on Redis through go-redis v9.
//
// Every mutation is one Lua script (EVALSHA, and EVAL when the server lost
// it), the plain concatenation of the files of scripts/, judged by the
// server's clock (TIME), with an explicit ownership check, safe to run twice,
// as go-redis does when a reply is lost; every call returns by its
// context's deadline, even on a stalled server. The keys and values are
// those of the TypeScript syncguard library, so Go and Node services using
// the same prefix contend correctly on the same keys:
//
//	<prefix>:<key>                 lock data, JSON {lockId, expiresAtMs, acquiredAtMs, key, fence}, PX ttl
//	<prefix>:id:<lockId>           the lock key, for release/extend by id, PX ttl;
//	                               after release a tombstone for Options.ResendWindow
//	<prefix>:fence:<prefix>:<key>  the fence counter (INCR), never expires, never deleted
//	<prefix>:done:<prefix>:<key>   done marker (ReleaseDone, optional), PX doneTTL
//	<prefix>:record:<prefix>:<key> replay record (ReleaseRecord, optional), PX ttl
//	<prefix>:config:backend        the configurations of the Backends on the prefix (layout,
//	                               fence stripes), written once by New, for syncguard and admin.Check
//
// User keys beginning with "id:", "fence:", "done:", "record:" or "queue:"
// are rejected: they would alias the internal keys. Waiters queue in Redis
// (Join): a release hands the lock to the oldest waiter and tells only its
// process. With lock.WithLimit(n) a key holds up to n fenced slots.
//
// New takes a redis.UniversalClient: a *redis.Client, a failover
// (Sentinel) client, a *redis.ClusterClient, or a wrapper embedding one;
// it rejects a *redis.Ring, which moves keys between shards (go-redis
// documents Ring for caching). docs/redis-keys.md, docs/client-retries.md,
// docs/waiting.md and docs/cluster.md have the details.
package redisbackend

// The package comment's key layout is a table, not Go, so internal/testkit/readme
// does not check it:
// NOT GO: <prefix>:<key>                 lock data, JSON {lockId, expiresAtMs, acquiredAtMs, key, fence}, PX ttl
