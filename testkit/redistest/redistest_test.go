package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The package comment (doc.go) quotes this TestMain; testkit/readme checks
// the copy.
// README: redistest-main
func TestMain(m *testing.M) { redistest.Main(m) }

// END README

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestStartSetGet(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	if s.Addr() == "127.0.0.1:6379" || !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("unexpected addr %q", s.Addr())
	}
	c := s.Client(t)
	key := redistest.Prefix(t) + "k"
	if err := c.Set(ctx(t), key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx(t), key).Result(); err != nil || got != "v" {
		t.Fatalf("GET = %q, %v", got, err)
	}
	s.Flush(t)
	if err := c.Get(ctx(t), key).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after Flush: %v, want redis.Nil", err)
	}
}

func TestRestartWithAOFKeepsData(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.WithAOF())
	c := s.Client(t)
	key := redistest.Prefix(t) + "k"
	if err := c.Set(ctx(t), key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	s.Restart(t)
	if s.Addr() != addr {
		t.Fatalf("Addr changed across Restart: %s -> %s", addr, s.Addr())
	}
	if got, err := c.Get(ctx(t), key).Result(); err != nil || got != "v" {
		t.Fatalf("GET after Restart = %q, %v; want v", got, err)
	}
}

func TestRestartWithoutAOFLosesData(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := s.Client(t)
	key := redistest.Prefix(t) + "k"
	if err := c.Set(ctx(t), key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	if err := c.Get(ctx(t), key).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after Restart: %v, want redis.Nil", err)
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := s.Client(t, func(o *redis.Options) {
		o.ReadTimeout = 200 * time.Millisecond
		o.MaxRetries = -1
	})
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	s.Pause(t)
	start := time.Now()
	err := c.Ping(ctx(t)).Err()
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("PING on paused server: %v (%T), want a timeout", err, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("PING on paused server took %v", d)
	}
	s.Resume(t)
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
}

func TestStopPausedServer(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Pause(t)
	start := time.Now()
	s.Stop(t)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Stop of a paused server took %v", d)
	}
}

func TestStopThenRestart(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := s.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	s.Stop(t)
	err := c.Ping(ctx(t)).Err()
	var opErr *net.OpError
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.As(err, &opErr) {
		t.Fatalf("PING on stopped server: %v (%T), want a connection error", err, err)
	}
	s.Stop(t) // idempotent
	s.Restart(t)
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
}

func TestWithPassword(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.WithPassword("s3cret"), redistest.WithArgs("--maxmemory", "1mb"))
	if err := s.Client(t).Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING with password: %v", err)
	}
	anon := s.Client(t, func(o *redis.Options) { o.Password = "" })
	if err := anon.Ping(ctx(t)).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("PING without password: %v, want NOAUTH", err)
	}
	if got, err := s.Client(t).ConfigGet(ctx(t), "maxmemory").Result(); err != nil || got["maxmemory"] != "1048576" {
		t.Fatalf("CONFIG GET maxmemory = %v, %v; want 1048576 (WithArgs)", got, err)
	}
	s.Flush(t) // authenticates too
}

func TestShared(t *testing.T) {
	t.Parallel()
	a, b := redistest.Shared(t), redistest.Shared(t)
	if a != b || a.Addr() != b.Addr() {
		t.Fatalf("Shared returned %s and %s", a.Addr(), b.Addr())
	}
	c := a.Client(t)
	key := redistest.Prefix(t) + "k"
	if err := c.Set(ctx(t), key, "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx(t), key).Result(); err != nil || got != "v" {
		t.Fatalf("GET = %q, %v", got, err)
	}
}

func TestPrefixUnique(t *testing.T) {
	t.Parallel()
	p1, p2 := redistest.Prefix(t), redistest.Prefix(t)
	if p1 == p2 {
		t.Fatalf("Prefix returned %q twice", p1)
	}
	if !strings.HasPrefix(p1, "t:TestPrefixUnique:") {
		t.Fatalf("Prefix = %q", p1)
	}
	t.Run("sub test/with {odd} chars", func(t *testing.T) {
		p := redistest.Prefix(t)
		if strings.ContainsAny(p, " {}") {
			t.Fatalf("Prefix not sanitized: %q", p)
		}
	})
}

// recTB records Fatal/Skip instead of ending the real test; the call under test runs in
// its own goroutine, which Fatalf/Skipf end with runtime.Goexit like the real ones do.
type recTB struct {
	testing.TB
	kind, msg string
}

func (r *recTB) Helper() {}
func (r *recTB) Fatalf(format string, args ...any) {
	r.kind, r.msg = "fatal", fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recTB) Skipf(format string, args ...any) {
	r.kind, r.msg = "skip", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func record(t *testing.T, f func(tb testing.TB)) *recTB {
	r := &recTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestSharedForbidsDisruption(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for name, f := range map[string]func(testing.TB){
		"Stop": s.Stop, "Restart": s.Restart, "Pause": s.Pause, "Resume": s.Resume,
	} {
		if r := record(t, f); r.kind != "fatal" || !strings.Contains(r.msg, "not allowed") {
			t.Errorf("%s on Shared: %s %q, want a fatal 'not allowed'", name, r.kind, r.msg)
		}
	}
}

// Not parallel: it changes the environment (t.Setenv).
func TestNoRedisSkipsEvenWithRedis(t *testing.T) {
	t.Setenv("SYNCGUARD_NO_REDIS", "1")
	t.Setenv("SYNCGUARD_REQUIRE_REDIS", "1") // SYNCGUARD_NO_REDIS wins
	t.Setenv("REDIS_ADDR", "127.0.0.1:1")    // never dialled: the test skips first
	for name, f := range map[string]func(testing.TB){
		"Start":         func(tb testing.TB) { redistest.Start(tb) },
		"Shared":        func(tb testing.TB) { redistest.Shared(tb) },
		"StartCluster":  func(tb testing.TB) { redistest.StartCluster(tb) },
		"SharedCluster": func(tb testing.TB) { redistest.SharedCluster(tb) },
		"StartSentinel": func(tb testing.TB) { redistest.StartSentinel(tb) },
	} {
		if r := record(t, f); r.kind != "skip" || !strings.Contains(r.msg, "SYNCGUARD_NO_REDIS=1 runs only the tests that need none") {
			t.Errorf("%s with SYNCGUARD_NO_REDIS=1: %s %q, want a skip naming it", name, r.kind, r.msg)
		}
	}
}

// Not parallel: it changes PATH (t.Setenv).
func TestNoRedisServerSkipsOrFails(t *testing.T) {
	t.Setenv("PATH", "")
	t.Setenv("REDIS_ADDR", "")
	t.Setenv("SYNCGUARD_NO_REDIS", "")

	t.Setenv("SYNCGUARD_REQUIRE_REDIS", "")
	r := record(t, func(tb testing.TB) { redistest.Start(tb) })
	if r.kind != "skip" || !strings.Contains(r.msg, "SKIP: no redis-server on PATH and REDIS_ADDR unset") ||
		!strings.Contains(r.msg, "SYNCGUARD_REQUIRE_REDIS=1") {
		t.Errorf("without redis-server: %s %q, want a loud skip", r.kind, r.msg)
	}

	t.Setenv("SYNCGUARD_REQUIRE_REDIS", "1")
	if !redistest.RequireRedis() {
		t.Fatal("RequireRedis() = false with SYNCGUARD_REQUIRE_REDIS=1")
	}
	r = record(t, func(tb testing.TB) { redistest.Start(tb) })
	if r.kind != "fatal" || !strings.Contains(r.msg, "no redis-server on PATH") {
		t.Errorf("without redis-server, required: %s %q, want a fatal", r.kind, r.msg)
	}
}
