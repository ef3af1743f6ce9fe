// Package redistest gives integration tests a real redis-server.
//
// Two ways to get one:
//
//   - Start launches a private redis-server process for one test (or benchmark) on a free
//     127.0.0.1 port, with its data dir and log file in t.TempDir(). It is stopped in
//     t.Cleanup. Private servers can be stopped, restarted (same port, same dir; data
//     survives with WithAOF), paused with SIGSTOP and resumed, and flushed.
//   - Shared returns one server per test package (per test binary): the server at
//     REDIS_ADDR if that is set, else a redis-server started lazily on first use. Tests
//     that share it must keep their keys under Prefix(t) so they never collide, and must not
//     flush, stop, restart or pause it (those methods call t.Fatal on a shared server;
//     Flush is allowed only on a shared server this package started itself).
//
// The shared server is not tied to any test's cleanup. Call Main from TestMain to stop it
// and remove its temp dir when the package's tests finish:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// Without Main the shared process lives until the test binary exits (on Linux it is
// started with Pdeathsig=SIGKILL, so it dies with the binary) and its temp dir is leaked.
//
// Replicated setups, each process started the same way (free port, own dir, log tails in
// failure messages, Pdeathsig):
//
//   - StartCluster: a private Redis Cluster of 3 masters with one replica each, created with
//     redis-cli --cluster create (redis-cli must be on PATH too) and ready (cluster_state:ok
//     and one view of the slots on every node, replicas in sync) within 30 s, usually ~4 s.
//     SharedCluster returns one per test binary, stopped by Main; its nodes must not be
//     stopped. Nodes can be stopped (StopNode) or crashed (KillNode) on private clusters.
//   - StartSentinel: a primary, one replica and three sentinels (redis-server --sentinel,
//     quorum 2, down-after-milliseconds 1000), ready within 30 s, usually ~2 s; Client returns
//     a redis.NewFailoverClient; KillNode, WaitFailover and RestartAsReplica drive a failover.
//
// This package never uses 127.0.0.1:6379 on its own: ports come from the kernel
// (listening on 127.0.0.1:0), and a port that loses a bind race is retried.
//
// # Environment
//
//   - REDIS_ADDR: host:port of an existing Redis (no password) that Shared uses instead of
//     starting its own. Start always starts its own process and ignores it.
//   - SYNCGUARD_REQUIRE_REDIS=1: when no redis-server is on PATH (and, for Shared,
//     REDIS_ADDR is unset), fail the test instead of skipping it. make test sets it.
//   - SYNCGUARD_NO_REDIS=1: skip every test that needs Redis, even with redis-server on
//     PATH or REDIS_ADDR set (it wins over SYNCGUARD_REQUIRE_REDIS). make test-unit sets it.
//
// redis-server is looked up on PATH. Its command line is
// --port N --bind 127.0.0.1 --dir DIR --logfile DIR/redis.log --save "" --appendonly no,
// plus the options given (WithAOF, WithPassword, WithArgs; WithArgs come last so they can
// override). Failure messages include the tail of the server's log.
package redistest
