package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demoredis"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	if err := run(ctx, &out, ""); err != nil { // embedded miniredis
		t.Fatalf("run: %v\noutput:\n%s", err, &out)
	}
	got := out.String()
	for _, want := range []string{
		"tally: 200: 1, 409: 9",
		"200 OK, fence 000000000000001",
		"request  1: 200 OK, fence 000000000000002",
		"request  2: 200 OK, fence 000000000000003",
		"request  3: 200 OK, fence 000000000000004",
		"Handlers ran 4 times, under fences 000000000000001, 000000000000002, 000000000000003, 000000000000004",
		"OK: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "409 Conflict, Retry-After: 10\n"); n != burst-1 {
		t.Errorf("409s with Retry-After: 10: got %d, want %d; output:\n%s", n, burst-1, got)
	}
}

func TestConnectBadURL(t *testing.T) {
	if _, _, err := demoredis.Connect(context.Background(), &bytes.Buffer{}, "not a url"); err == nil {
		t.Error("connect with a malformed REDIS_URL: got nil error")
	}
}

func TestTally(t *testing.T) {
	rs := []reply{{status: 409}, {status: 200}, {status: 409}, {status: 503}}
	if got, want := tally(rs), "200: 1, 409: 2, 503: 1"; got != want {
		t.Errorf("tally: got %q, want %q", got, want)
	}
}

// leakyBackend is a broken lock: every Acquire locks a key of its own, so
// duplicates never collide.
type leakyBackend struct {
	lock.Backend
	n atomic.Int64
}

func (b *leakyBackend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	return b.Backend.Acquire(ctx, fmt.Sprintf("%s#%d", key, b.n.Add(1)), ttl)
}

// The demo must fail loudly (make demo exits non-zero) when the lock lets
// duplicates through.
func TestDemoFailsWhenLockLeaks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	rdb, closeRedis, err := demoredis.Connect(ctx, &out, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeRedis)
	backend, err := redisbackend.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = demo(ctx, &out, &leakyBackend{Backend: backend})
	if err == nil || !strings.Contains(err.Error(), `burst: tally "200: 10", want "200: 1, 409: 9"`) {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's tally mismatch; output:\n%s", err, &out)
	}
}
