// Syncguard is the operator's command for syncguard-go locks on Redis: it
// lists the live locks and concurrency limits, shows one key in full, watches the lock traffic,
// checks what the server does for fences, and force-releases a stuck key.
//
//	go install github.com/syncguard-go/syncguard/cmd/syncguard@latest
//
// Usage:
//
//	syncguard [flags] ls [--match GLOB] [--json]
//	syncguard [flags] show [--json] [--route R] [--scope S] [--key-prefix NS] KEY
//	syncguard [flags] release --force [--yes] [--all | --slot FENCE] [--route R] [--scope S] [--key-prefix NS] KEY
//	syncguard [flags] watch [--match GLOB] [--interval 1s] [--count N] [--top 3] [--json]
//	syncguard [flags] doctor [--json] [--samples 100]
//
// The flags, before or after the command:
//
//	--redis URL        redis://[user:password@]host:port[/db] or rediss://...; repeat it
//	                   for a Redis Cluster (one URL of a cluster node works too);
//	                   default $REDIS_URL (comma-separated for several), else
//	                   redis://127.0.0.1:6379
//	--prefix P         the application's redisbackend.Options.Prefix (default "syncguard")
//	--layout L         auto, single or cluster: its Options.Layout (auto: as recorded)
//	--fence-stripes N  its Options.FenceStripes (default: as recorded)
//
// Every redisbackend.Backend records its layout and fence stripes under
// its prefix when it starts (redisbackend.ConfigKey, "<prefix>:config:backend"),
// and the command names the keys as the newest record says, so it needs
// --layout and --fence-stripes only to override it (or for instances that
// recorded nothing: older versions, the TypeScript library); it notes on
// stderr when instances recorded different configurations, which doctor
// reports.
//
// KEY is the key as the application locks it ("invoice:42"), as ls prints
// it; for a key of the HTTP middleware, show and release build the stored
// name from the key the request carried and --route (the method and the
// route pattern, as written or escaped as a key prints it), --scope and
// --key-prefix, and print those parts as written. Every command warns on
// stderr, naming the server, when it holds no configuration record under
// the prefix (doctor then exits 1); without --redis or REDIS_URL it names
// the server it read in any case. Raw keys appear in the output, lock ids never: a holder is shown as
// lockdriver.HashKey of its lock id, as lock.Info.IDHash, since the id itself
// releases the lock. Times are the Redis server's (TIME), as the locks'.
//
// ls scans with SCAN (every master of a cluster) and prints each page of
// locks as it goes, so it holds one page at a time whatever the number of
// keys; it tells lock keys from index keys, fence counters, done markers,
// stored records and waiter queues by name, and skips values that are not
// syncguard lock data. A concurrency limit (lock.WithLimit: a sorted set
// of slots at the lock key) is one line of ls: its live slots over the n
// of its latest grant, and its waiters; show lists its slots (a slot is
// live while its expiry, by the server's TIME, is within
// wire.TimeToleranceMs); --match is matched against the keys themselves,
// so a key stored under a hash (over about 970 bytes) matches too. watch
// samples the same way every interval and counts the grants by the index
// keys every grant writes (a lock id it did not see before) and by the
// fences, so the application needs no change; --json prints its lines as
// JSON objects. A leader election's key (lock/election: lock data that
// names its owner) is marked in ls ("election: <leader>"), shown by show
// with the leader's identity, the term's fence and the time left, and its
// new terms are counted by watch. release --force
// evicts the holder through redisbackend/admin's ForceRelease: the lock and its
// index key go, the fence counter stays, waiters are woken as by a release;
// the holder is not told, and its fence is now stale. On a limit it
// releases nothing unless told which slots: --all, or --slot FENCE
// (ForceReleaseSlots); each freed slot goes to a waiter. doctor prints the
// findings of redisbackend's Check, one on the recorded configurations
// (CheckRecordedConfig: severe when instances name a lock's keys
// differently) and one on the fence counters (count and MEMORY USAGE).
//
// Errors are one line on stderr. Exit status: 0 ok, 1 failure (Redis
// unreachable, credentials refused, not syncguard data, nothing to
// release), 2 usage error, 3 doctor found a severe finding. The commands
// themselves are in internal/cli, whose Run the tests call.
package main

// The package comment's blocks are shell commands and usage, not Go:
// NOT GO: go install github.com/syncguard-go/syncguard/cmd/syncguard@latest
// NOT GO: syncguard [flags] ls [--match GLOB] [--json]
// NOT GO: --redis URL        redis://[user:password@]host:port[/db] or rediss://...; repeat it
