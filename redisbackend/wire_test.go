package redisbackend_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestWireLayout reads the raw keys after Acquire on a private server with
// the default prefix and checks them against the TypeScript library's
// layout: names, JSON fields and types, PTTL, index value, fence counter.
func TestWireLayout(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 30 * time.Second
	l, err := b.Acquire(ctx, "resource:123", ttl)
	if err != nil {
		t.Fatal(err)
	}

	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	want := []string{
		"syncguard:config:backend", // written once by New (config.go); the TypeScript library never reads it
		"syncguard:fence:syncguard:resource:123",
		"syncguard:id:" + l.ID,
		"syncguard:resource:123",
	}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Fatalf("keys = %q, want %q", keys, want)
	}

	raw, err := rdb.Get(ctx, "syncguard:resource:123").Result()
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		t.Fatalf("lock value %q is not JSON: %v", raw, err)
	}
	if len(data) != 5 {
		t.Errorf("lock JSON has %d fields, want exactly 5: %s", len(data), raw)
	}
	exp, _ := data["expiresAtMs"].(float64)
	acq, _ := data["acquiredAtMs"].(float64)
	if got := data["lockId"]; got != l.ID {
		t.Errorf("lockId = %v, want %v", got, l.ID)
	}
	if got := data["key"]; got != "resource:123" {
		t.Errorf("key = %v, want resource:123", got)
	}
	if got := data["fence"]; got != "000000000000001" {
		t.Errorf("fence = %#v, want the string 000000000000001", got)
	}
	if int64(exp) != l.ExpiresAt.UnixMilli() {
		t.Errorf("expiresAtMs = %v, want the lease's %v", int64(exp), l.ExpiresAt.UnixMilli())
	}
	if int64(exp)-int64(acq) != ttl.Milliseconds() {
		t.Errorf("expiresAtMs - acquiredAtMs = %v, want %v", int64(exp)-int64(acq), ttl.Milliseconds())
	}
	if skew := time.Since(time.UnixMilli(int64(acq))); skew < -time.Second || skew > 5*time.Second {
		t.Errorf("acquiredAtMs is %v away from now; want the server's TIME", skew)
	}

	idx, err := rdb.Get(ctx, "syncguard:id:"+l.ID).Result()
	if err != nil || idx != "syncguard:resource:123" {
		t.Errorf("index value = %q, %v; want the full lock key", idx, err)
	}
	for _, k := range []string{"syncguard:resource:123", "syncguard:id:" + l.ID} {
		pttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil || pttl <= ttl-2*time.Second || pttl > ttl {
			t.Errorf("PTTL(%s) = %v, %v; want just under %v", k, pttl, err, ttl)
		}
	}
	if pttl := rdb.PTTL(ctx, "syncguard:fence:syncguard:resource:123").Val(); pttl != -1 {
		t.Errorf("fence key PTTL = %v, want -1 (never expires)", pttl)
	}
	if v := rdb.Get(ctx, "syncguard:fence:syncguard:resource:123").Val(); v != "1" {
		t.Errorf("fence counter = %q, want 1", v)
	}

	// Release removes the lock, never the fence counter, and replaces the
	// index by a tombstone for the resend window (nonce.go): a value that
	// starts with a NUL byte, so a TypeScript client reading it as a lock
	// key finds nothing there.
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	idKey := "syncguard:id:" + l.ID
	keys = rdb.Keys(ctx, "*").Val()
	sort.Strings(keys)
	if want := []string{"syncguard:config:backend", "syncguard:fence:syncguard:resource:123", idKey}; !slices.Equal(keys, want) {
		t.Errorf("keys after release = %q, want %q", keys, want)
	}
	if v := rdb.Get(ctx, idKey).Val(); !strings.HasPrefix(v, "\x001:") {
		t.Errorf("index after release = %q, want a tombstone \"\\x001:<nonce>\"", v)
	}
	if pttl := rdb.PTTL(ctx, idKey).Val(); pttl <= 0 || pttl > 2*time.Minute {
		t.Errorf("tombstone PTTL = %v, want the resend window", pttl)
	}
}

// TestWireKeyEscaping: the lock JSON stays valid, with the key intact,
// whatever characters the key holds (the acquire script writes the JSON
// itself and escapes only the key, through cjson).
func TestWireKeyEscaping(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{
		`quote"key`, `back\slash\`, `slash/</script>`, "ctl\n\t\r\x01\x7f", "caf\u00e9 \U0001F512",
		`{"lockId":"x"}`, `","fence":"999999999999999`, "\u2028\u2029",
	} {
		l, err := b.Acquire(ctx, key, time.Minute)
		if err != nil {
			t.Fatalf("acquire %q: %v", key, err)
		}
		raw, err := rdb.Get(ctx, b.Prefix()+":"+key).Result()
		if err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(raw), &data); err != nil || len(data) != 5 {
			t.Errorf("%q: lock value %s: %v, want JSON with 5 fields", key, raw, err)
			continue
		}
		if data["key"] != key || data["lockId"] != l.ID || data["fence"] != string(l.Fence) {
			t.Errorf("%q: lock value %s, want key, lockId %s and fence %s", key, raw, l.ID, l.Fence)
		}
		if info, err := b.LookupKey(ctx, key); err != nil || info == nil || info.KeyHash != lockdriver.HashKey(key) {
			t.Errorf("%q: LookupKey = %+v, %v", key, info, err)
		}
		if err := b.Release(ctx, l.ID); err != nil {
			t.Errorf("%q: release: %v", key, err)
		}
	}
}

// TestWireHashedFenceKey checks the two-step fence key derivation when the
// fence key exceeds the 1000-byte budget. The expected value was computed
// independently (Python hashlib).
func TestWireHashedFenceKey(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	prefix := strings.Repeat("p", 240)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("k", 512)
	if _, err := b.Acquire(ctx, key, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{prefix + ":" + key, prefix + ":b_QIYs4OBLeXfqqNi73d3A"} {
		if n := rdb.Exists(ctx, k).Val(); n != 1 {
			t.Errorf("key %.40s... does not exist", k[len(prefix):])
		}
	}
}

// TestWireNFC checks that a decomposed key is stored in NFC, as the
// TypeScript library stores it.
func TestWireNFC(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "cafe\u0301", time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, "syncguard:caf\u00e9").Val(); n != 1 {
		t.Errorf("NFC lock key missing; keys: %q", rdb.Keys(ctx, "*").Val())
	}
	if _, err := b.Acquire(ctx, "caf\u00e9", time.Minute); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("composed form acquired separately: err = %v, want ErrLocked", err)
	}
}

// TestWireForeignLock plants a lock exactly as the TypeScript library
// writes it (its cjson field order, its index key) and checks that the Go
// backend contends with it, reads it, and can release it by its id.
func TestWireForeignLock(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	const id = "AbCdEfGhIjKlMnOpQrStUv"
	value := `{"lockId":"` + id + `","expiresAtMs":` + itoa(now+60000) +
		`,"acquiredAtMs":` + itoa(now) + `,"key":"orders:7","fence":"000000000000041"}`
	rdb.Set(ctx, "syncguard:orders:7", value, time.Minute)
	rdb.Set(ctx, "syncguard:id:"+id, "syncguard:orders:7", time.Minute)
	rdb.Set(ctx, "syncguard:fence:syncguard:orders:7", "41", 0)

	_, err = b.Acquire(ctx, "orders:7", time.Minute)
	var le *lock.LockedError
	if !errors.As(err, &le) || le.ExpiresAt.UnixMilli() != now+60000 {
		t.Fatalf("Acquire on a foreign lock: err = %v, want *LockedError with the holder's expiry", err)
	}
	info, err := b.LookupID(ctx, id)
	if err != nil || info == nil || info.Fence != "000000000000041" || info.KeyHash != lockdriver.HashKey("orders:7") {
		t.Fatalf("LookupID = %+v, %v; want the foreign lease", info, err)
	}
	if err := b.Release(ctx, id); err != nil {
		t.Fatalf("Release by the foreign id: %v", err)
	}
	l, err := b.Acquire(ctx, "orders:7", time.Minute)
	if err != nil || l.Fence != "000000000000042" {
		t.Fatalf("Acquire after release = %v, %v; want fence 000000000000042", l.Fence, err)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
