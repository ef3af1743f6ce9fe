// Syncguard is the operator's command for syncguard-go locks on Redis. It
// lists the live locks, shows one key in full, watches the lock traffic,
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
//	--timeout D        how long to wait for each reply from Redis (default 10s)
//
// The command names the keys as the application's backends recorded
// their configuration under the prefix. KEY is the key as the application
// locks it. Raw keys appear in the output, lock ids never.
//
// Errors are one line on stderr. Exit status: 0 ok, 1 failure, 2 usage
// error, 3 doctor found a severe finding. docs/operating.md in the
// repository has a session of each command.
package main

// The package comment's blocks are shell commands and usage, not Go:
// NOT GO: go install github.com/syncguard-go/syncguard/cmd/syncguard@latest
// NOT GO: syncguard [flags] ls [--match GLOB] [--json]
// NOT GO: --redis URL        redis://[user:password@]host:port[/db] or rediss://...; repeat it
