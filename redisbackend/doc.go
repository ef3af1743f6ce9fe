// Package redisbackend implements lock.Backend on Redis through go-redis v9.
//
// Every mutation is one Lua script run with EVALSHA (falling back to EVAL
// when the server has lost its script cache; on Redis 7 the acquire and
// release of a lock or of a limit's slot are Redis functions, called with
// FCALL: see functions.go and docs/client-retries.md), judged by the
// server's clock (TIME), with an explicit ownership check. The keys and
// values are those of the TypeScript syncguard library, so Go and Node
// services using the same prefix contend correctly on the same keys:
//
//	<prefix>:<key>                 lock data, JSON {lockId, expiresAtMs, acquiredAtMs, key, fence}, PX ttl
//	<prefix>:id:<lockId>           the lock key, for release/extend by id, PX ttl;
//	                               after release a tombstone for Options.ResendWindow
//	<prefix>:fence:<prefix>:<key>  the fence counter (INCR), never expires, never deleted
//	<prefix>:done:<prefix>:<key>   done marker (ReleaseDone, optional), PX doneTTL
//	<prefix>:record:<prefix>:<key> replay record (ReleaseRecord, optional), PX ttl
//	<prefix>:config:backend        the configurations of the Backends on the prefix (layout,
//	                               fence stripes), written once by New, for syncguard and Check
//
// Keys longer than the 1000-byte budget are hashed (see wire.MakeStorageKey).
//
// Every script is safe to run twice, as go-redis does when a reply is lost,
// and every call returns by its context's deadline, even on a stalled
// server (see nonce.go and docs/client-retries.md).
//
// User keys beginning with "id:", "fence:", "done:", "record:" or "queue:",
// and the key "config:backend", are rejected, because they would alias the
// internal keys.
//
// Waiters queue in Redis (lock.IDBackend's Join, queue.go): a release
// hands the lock to the oldest waiter and tells only its process; for a
// quantum after the lock came to a process, that process's own waiters go
// first, in the release's reply (Options.HandOffLocality, local.go). With
// lock.WithLimit(n) (limit.go) a key holds up to n fenced slots, kept in a
// sorted set at the lock key, each released, extended and looked up by its
// id like a lock; a key is used as a lock or as a limit, never both at
// once (lock.ErrKindMismatch).
//
// New takes a redis.UniversalClient: a *redis.Client, a failover
// (Sentinel) client, a *redis.ClusterClient, or a wrapper embedding one,
// except a *redis.Ring, which New rejects: a Ring moves keys to another
// shard when it marks one down, so a lock could be held on two shards at
// once and its fences restart (go-redis documents Ring for caching). New
// reads the client's options for the layout (LayoutAuto), the resend
// window and which calls go-redis ends by their deadlines itself (see New).
//
// The script calls of concurrent goroutines share pipelines: a call goes
// out at once while few round trips are under way, and later calls go out
// together in the next one (see Options.DisableCoalescing; bench/README.md
// has what it gives). A lone call is sent exactly as without it.
package redisbackend

// The package comment's key layout is a table, not Go, so internal/testkit/readme
// does not check it:
// NOT GO: <prefix>:<key>                 lock data, JSON {lockId, expiresAtMs, acquiredAtMs, key, fence}, PX ttl
