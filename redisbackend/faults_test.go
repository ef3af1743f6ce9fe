package redisbackend_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func newBackend(t *testing.T, rdb redis.UniversalClient, prefix string) *redisbackend.Backend {
	t.Helper()
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantCode(t *testing.T, what string, err error, want lock.Code) {
	t.Helper()
	if got := lock.CodeOf(err); got != want {
		t.Errorf("%s: code = %q (err %v), want %q", what, got, err, want)
	}
}

func TestFaultServerDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) {
		o.MaxRetries = -1
		o.DialTimeout = 500 * time.Millisecond
	})
	b := newBackend(t, rdb, "down")
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	_, err = b.Acquire(ctx, "k2", time.Minute)
	wantCode(t, "Acquire", err, lock.CodeServiceUnavailable)
	wantCode(t, "Release", b.Release(ctx, l.ID), lock.CodeServiceUnavailable)
	_, err = b.Extend(ctx, l.ID, time.Minute)
	wantCode(t, "Extend", err, lock.CodeServiceUnavailable)
	_, err = b.IsLocked(ctx, "k")
	wantCode(t, "IsLocked", err, lock.CodeServiceUnavailable)
}

func TestFaultStalledServer(t *testing.T) {
	srv := redistest.Start(t)
	const readTimeout = 300 * time.Millisecond
	rdb := srv.Client(t, func(o *redis.Options) {
		o.MaxRetries = -1
		o.ReadTimeout = readTimeout
		o.WriteTimeout = readTimeout
	})
	b := newBackend(t, rdb, "stall")
	ctx := context.Background()
	if _, err := b.Acquire(ctx, "warm", time.Minute); err != nil { // dial and load scripts first
		t.Fatal(err)
	}
	srv.Pause(t)
	start := time.Now()
	_, err := b.Acquire(ctx, "k", time.Minute)
	elapsed := time.Since(start)
	srv.Resume(t)
	wantCode(t, "Acquire on a stalled server", err, lock.CodeNetworkTimeout)
	if elapsed > 4*readTimeout {
		t.Errorf("Acquire took %v on a stalled server, want about the read timeout %v", elapsed, readTimeout)
	}
}

func TestFaultAuth(t *testing.T) {
	srv := redistest.Start(t, redistest.WithPassword("s3cret"))
	ctx := context.Background()
	noPass := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { noPass.Close() })
	_, err := newBackend(t, noPass, "auth").Acquire(ctx, "k", time.Minute)
	wantCode(t, "no password", err, lock.CodeAuthFailed)

	wrong := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "nope", MaxRetries: -1})
	t.Cleanup(func() { wrong.Close() })
	_, err = newBackend(t, wrong, "auth").Acquire(ctx, "k", time.Minute)
	wantCode(t, "wrong password", err, lock.CodeAuthFailed)

	if _, err := newBackend(t, srv.Client(t), "auth").Acquire(ctx, "k", time.Minute); err != nil {
		t.Errorf("right password: %v", err)
	}
}

// TestFaultCorruptData plants values that are not syncguard lock data at a
// lock key: every operation fails with a clear Internal error, no panic,
// nothing overwritten.
func TestFaultCorruptData(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	prefix := redistest.Prefix(t)
	b := newBackend(t, rdb, prefix)
	ctx := context.Background()
	const id = "AAAAAAAAAAAAAAAAAAAAAA"
	for _, tc := range []struct{ desc, value string }{
		{"not JSON", "garbage{"},
		{"JSON array", "[1,2,3]"},
		{"string expiry", `{"lockId":"` + id + `","expiresAtMs":"soon","acquiredAtMs":1,"key":"k","fence":"000000000000001"}`},
		{"missing expiry", `{"lockId":"` + id + `","key":"k"}`},
		{"huge expiry, bad fence", `{"lockId":"` + id + `","expiresAtMs":1e300,"acquiredAtMs":1,"key":"k","fence":12}`},
		{"bad lockId type", `{"lockId":7,"expiresAtMs":99999999999999,"acquiredAtMs":1,"key":"k","fence":"000000000000001"}`},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			key := "corrupt:" + tc.desc
			lockKey := strings.TrimRight(prefix, ":") + ":" + key
			rdb.Set(ctx, lockKey, tc.value, time.Minute)
			rdb.Set(ctx, strings.TrimRight(prefix, ":")+":id:"+id, lockKey, time.Minute)

			_, err := b.Acquire(ctx, key, time.Minute)
			if !errors.Is(err, lock.ErrLocked) { // a live foreign lock with a readable expiry is contention
				wantCode(t, "Acquire", err, lock.CodeInternal)
			}
			_, err = b.LookupKey(ctx, key)
			wantCode(t, "LookupKey", err, lock.CodeInternal)
			_, err = b.LookupID(ctx, id)
			if err != nil || strings.Contains(tc.value, `"lockId":"`+id) {
				wantCode(t, "LookupID", err, lock.CodeInternal)
			}
			if got := rdb.Get(ctx, lockKey).Val(); got != tc.value {
				t.Errorf("value was overwritten: %q", got)
			}
		})
	}
}

// TestFaultFencesSurviveRestart restarts an AOF server (appendfsync
// always) and checks fences keep strictly increasing and a held lease
// survives.
func TestFaultFencesSurviveRestart(t *testing.T) {
	srv := redistest.Start(t, redistest.WithAOF())
	rdb := srv.Client(t)
	b := newBackend(t, rdb, "aof")
	ctx := context.Background()
	var last lock.Fence
	for i := 0; i < 5; i++ {
		l, err := b.Acquire(ctx, "k", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if l.Fence <= last {
			t.Fatalf("fence %s after %s", l.Fence, last)
		}
		last = l.Fence
		if err := b.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	held, err := b.Acquire(ctx, "held", time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	srv.Restart(t)

	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatalf("Acquire after restart: %v", err)
	}
	if l.Fence <= last {
		t.Errorf("fence after restart = %s, want > %s", l.Fence, last)
	}
	if _, err := b.Acquire(ctx, "held", time.Minute); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("held lease lost across restart: Acquire err = %v, want ErrLocked", err)
	}
	if err := b.Release(ctx, held.ID); err != nil {
		t.Errorf("Release of the lease held across restart: %v", err)
	}
}

// TestFaultFenceOverflow sets a fence counter at the maximum: Acquire fails
// Internal and leaves no lock or index behind.
func TestFaultFenceOverflow(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	// Default prefix; no configuration record (config.go): the test counts
	// every key of the server.
	b, err := redisbackend.New(rdb, &redisbackend.Options{DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rdb.Set(ctx, "syncguard:fence:syncguard:ovf", string(wire.FenceMax), 0)
	_, err = b.Acquire(ctx, "ovf", time.Minute)
	wantCode(t, "Acquire past FenceMax", err, lock.CodeInternal)
	keys := rdb.Keys(ctx, "*").Val()
	if len(keys) != 1 || keys[0] != "syncguard:fence:syncguard:ovf" {
		t.Errorf("keys after overflow = %q, want only the fence counter", keys)
	}
	if _, err := b.IsLocked(ctx, "ovf"); err != nil {
		t.Errorf("IsLocked: %v", err)
	}
}

// TestFaultFenceWarning checks the warning past FenceWarn is logged with
// the key's hash and never the raw key.
func TestFaultFenceWarning(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var logs strings.Builder
	b, err := redisbackend.New(rdb, &redisbackend.Options{Logger: newTextLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const key = "secret-customer-42"
	rdb.Set(ctx, "syncguard:fence:syncguard:"+key, "90000000000000", 0) // FenceWarn as Redis stores it
	l, err := b.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if l.Fence != "090000000000001" {
		t.Errorf("fence = %s, want 090000000000001", l.Fence)
	}
	out := logs.String()
	if !strings.Contains(out, "key rotation") || !strings.Contains(out, lockdriver.HashKey(key)) {
		t.Errorf("no fence warning with the key hash in log: %q", out)
	}
	if strings.Contains(out, key) {
		t.Errorf("log contains the raw key: %q", out)
	}
}

// TestFaultBadPrefix covers configuration validation.
func TestFaultBadPrefix(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { rdb.Close() })
	for _, p := range []string{":::", "app:fence", "fence", "id", "a:id:b", "done", "x:done", strings.Repeat("p", 257), "bad\xff"} {
		if _, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: p}); lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("New(prefix %.20q) err = %v, want InvalidArgument", p, err)
		}
	}
	for _, p := range []string{"", "app", "app:", "prod:locks", "fences", "ids"} {
		if _, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: p}); err != nil {
			t.Errorf("New(prefix %q): %v", p, err)
		}
	}
	if _, err := redisbackend.New(nil, nil); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("New(nil) err = %v, want InvalidArgument", err)
	}
}

// TestReservedKeys checks user keys that would alias index or fence keys
// are rejected before any I/O.
func TestReservedKeys(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { rdb.Close() })
	b := newBackend(t, rdb, "")
	ctx := context.Background()
	for _, k := range []string{"id:AAAAAAAAAAAAAAAAAAAAAA", "fence:syncguard:x", "id:", "fence:", "done:x", "done:"} {
		_, err := b.Acquire(ctx, k, time.Minute)
		wantCode(t, "Acquire "+k, err, lock.CodeInvalidArgument)
		_, err = b.IsLocked(ctx, k)
		wantCode(t, "IsLocked "+k, err, lock.CodeInvalidArgument)
		_, err = b.LookupKey(ctx, k)
		wantCode(t, "LookupKey "+k, err, lock.CodeInvalidArgument)
	}
}

// TestCleanupInIsLocked checks the opt-in cleanup deletes an expired lock
// and its index but never the fence counter, and that the default is
// read-only.
func TestCleanupInIsLocked(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	const id = "BBBBBBBBBBBBBBBBBBBBBB"
	expired := `{"lockId":"` + id + `","expiresAtMs":1000,"acquiredAtMs":1,"key":"k","fence":"000000000000003"}`
	plant := func() {
		rdb.Set(ctx, "syncguard:k", expired, 0)
		rdb.Set(ctx, "syncguard:id:"+id, "syncguard:k", 0)
		rdb.Set(ctx, "syncguard:fence:syncguard:k", "3", 0)
	}
	plant()
	ro := newBackend(t, rdb, "")
	if locked, err := ro.IsLocked(ctx, "k"); err != nil || locked {
		t.Fatalf("IsLocked = %v, %v; want false", locked, err)
	}
	if n := rdb.Exists(ctx, "syncguard:k", "syncguard:id:"+id).Val(); n != 2 {
		t.Errorf("default IsLocked deleted keys (%d of 2 left)", n)
	}
	cl, err := redisbackend.New(rdb, &redisbackend.Options{CleanupInIsLocked: true})
	if err != nil {
		t.Fatal(err)
	}
	if locked, err := cl.IsLocked(ctx, "k"); err != nil || locked {
		t.Fatalf("IsLocked with cleanup = %v, %v; want false", locked, err)
	}
	if n := rdb.Exists(ctx, "syncguard:k", "syncguard:id:"+id).Val(); n != 0 {
		t.Errorf("cleanup left %d of the lock and index keys", n)
	}
	if v := rdb.Get(ctx, "syncguard:fence:syncguard:k").Val(); v != "3" {
		t.Errorf("fence counter = %q after cleanup, want 3", v)
	}
}
