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
// Every Backend records its layout and fence stripes under its prefix
// ("<prefix>:config:backend"), and the command names the keys as the newest
// record says; --layout and --fence-stripes override it. KEY is the key as
// the application locks it, as ls prints it; for a key of the HTTP
// middleware add --route, --scope and --key-prefix. Raw keys appear in the
// output, lock ids never (a holder is the hash of its id). Times are the
// Redis server's.
//
// ls lists locks, limits and leader elections, a page at a time; show
// prints one key in full (a limit's slots, an election's leader, a stored
// response); watch samples the traffic and counts grants and terms;
// release --force evicts a holder (the fence counter stays, waiters are
// woken); doctor checks the recorded configurations and the fence
// counters. docs/operating.md has a session of each.
//
// Errors are one line on stderr. Exit status: 0 ok, 1 failure (Redis
// unreachable, credentials refused, not syncguard data, nothing to
// release), 2 usage error, 3 doctor found a severe finding.
package main

// The package comment's blocks are shell commands and usage, not Go:
// NOT GO: go install github.com/syncguard-go/syncguard/cmd/syncguard@latest
// NOT GO: syncguard [flags] ls [--match GLOB] [--json]
// NOT GO: --redis URL        redis://[user:password@]host:port[/db] or rediss://...; repeat it
