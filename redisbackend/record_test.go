package redisbackend_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestRecordsApartFromDoneMarkers: on one prefix, the records of
// ReleaseRecord (replay) and the done markers of ReleaseDone (asynqlock)
// live at different keys, "<prefix>:record:<lock key>" and
// "<prefix>:done:<lock key>", so neither is read as the other: a done
// marker is not a record (the HTTP middleware would answer 500 for a
// record it cannot decode) and a record is not a done marker (asynqlock
// would drop the job).
func TestRecordsApartFromDoneMarkers(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	for _, tc := range []struct {
		desc string
		o    redisbackend.Options
	}{
		{"single", redisbackend.Options{Layout: redisbackend.LayoutSingle}},
		{"single striped", redisbackend.Options{Layout: redisbackend.LayoutSingle, FenceStripes: 16}},
		{"cluster", redisbackend.Options{Layout: redisbackend.LayoutCluster}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			tc.o.Prefix = redistest.Prefix(t)
			b := newForceBackend(t, rdb, tc.o)
			testRecordsApart(t, rdb, b)
		})
	}
}

func testRecordsApart(t *testing.T, rdb redis.Cmdable, b *redisbackend.Backend) {
	ctx := context.Background()
	rec := []byte("SGR\x01\x00\xff{\"status\":201}")

	// Key K: a done marker, then a record after re-acquiring.
	const k = "orders:K"
	first, err := b.Acquire(ctx, k, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, first, time.Minute); err != nil {
		t.Fatalf("ReleaseDone: %v", err)
	}
	second, err := b.Acquire(ctx, k, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, second, rec, time.Minute); err != nil {
		t.Fatalf("ReleaseRecord: %v", err)
	}
	if got, ok, err := b.Record(ctx, k); err != nil || !ok || string(got) != string(rec) {
		t.Errorf("Record(K) = %q, %v, %v; want the record %q", got, ok, err, rec)
	}
	if done, err := b.IsDone(ctx, k); err != nil || !done {
		t.Errorf("IsDone(K) = %v, %v; want true from the done marker", done, err)
	}
	keys, err := admin.StorageKeys(b, k)
	if err != nil {
		t.Fatal(err)
	}
	if keys.Record == keys.Done {
		t.Fatalf("record and done marker share the key %s", keys.Done)
	}
	if v := rdb.Get(ctx, keys.Done).Val(); v != string(first.Fence) {
		t.Errorf("done marker %s = %q, want the first run's fence %s", keys.Done, v, first.Fence)
	}
	if v := rdb.Get(ctx, keys.Record).Val(); v != string(rec) {
		t.Errorf("record %s = %q, want %q", keys.Record, v, rec)
	}

	// The other order: a record, then a done marker, keeps the record.
	const k2 = "orders:K2"
	l, err := b.Acquire(ctx, k2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	l, err = b.Acquire(ctx, k2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, l, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Record(ctx, k2); err != nil || !ok || string(got) != string(rec) {
		t.Errorf("Record(K2) after a later done marker = %q, %v, %v; want the record %q", got, ok, err, rec)
	}

	// A key with only a done marker has no record.
	const d = "jobs:D"
	l, err = b.Acquire(ctx, d, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, l, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Record(ctx, d); err != nil || ok || got != nil {
		t.Errorf("Record of a key with only a done marker = %q, %v, %v; want none", got, ok, err)
	}
	if done, err := b.IsDone(ctx, d); err != nil || !done {
		t.Errorf("IsDone(D) = %v, %v; want true", done, err)
	}

	// A key with only a record is not done.
	const r = "orders:R"
	l, err = b.Acquire(ctx, r, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	if done, err := b.IsDone(ctx, r); err != nil || done {
		t.Errorf("IsDone of a key with only a record = %v, %v; want false", done, err)
	}
	if _, ok, err := b.Record(ctx, r); err != nil || !ok {
		t.Errorf("Record(R) = %v, %v; want the record", ok, err)
	}
}

// TestRecordKeyNames checks the documented record key of both layouts,
// short and hashed (see Layout): "<prefix>:record:<lock key>", or
// "<prefix>:{T}:record:<lock key>", hashed by wire.MakeStorageKey with the
// same (tagged) prefix when too long, as the done marker's.
func TestRecordKeyNames(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { rdb.Close() })

	single := newForceBackend(t, rdb, redisbackend.Options{})
	keys, err := admin.StorageKeys(single, "resource:123")
	if err != nil {
		t.Fatal(err)
	}
	if want := "syncguard:record:syncguard:resource:123"; keys.Record != want {
		t.Errorf("single: Record = %q, want %q", keys.Record, want)
	}

	cluster := newForceBackend(t, rdb, redisbackend.Options{Layout: redisbackend.LayoutCluster})
	keys, err = admin.StorageKeys(cluster, "resource:123")
	if err != nil {
		t.Fatal(err)
	}
	lockKey, _, _, doneKey := clusterKeys("syncguard", "resource:123", "")
	tp := lockKey[:strings.Index(lockKey, "}")+1]
	if want := tp + ":record:" + lockKey; keys.Record != want || keys.Lock != lockKey || keys.Done != doneKey {
		t.Errorf("cluster: StorageKeys = %+v, want Record %q", keys, want)
	}

	// A long prefix and a 512-byte key: the record key is hashed, with the
	// tagged prefix kept in front in the cluster layout.
	prefix := strings.Repeat("p", redisbackend.MaxPrefixBytes)
	long := strings.Repeat("k", lockdriver.MaxKeyBytes)
	for _, o := range []redisbackend.Options{{Prefix: prefix}, {Prefix: prefix, Layout: redisbackend.LayoutCluster}} {
		b := newForceBackend(t, rdb, o)
		keys, err := admin.StorageKeys(b, long)
		if err != nil {
			t.Fatal(err)
		}
		tp := prefix
		if o.Layout == redisbackend.LayoutCluster {
			tp = keys.Lock[:strings.Index(keys.Lock, "}")+1]
		}
		want, err := wire.MakeStorageKey(tp, "record:"+keys.Lock, redisbackend.KeyBudget, redisbackend.KeyReserve)
		if err != nil {
			t.Fatal(err)
		}
		if keys.Record != want || len(keys.Record) > redisbackend.KeyBudget || keys.Record == keys.Done ||
			strings.Contains(keys.Record, ":record:") {
			t.Errorf("%v: hashed Record = %q, want %q (done %q)", b.Layout(), keys.Record, want, keys.Done)
		}
	}
}

// TestRecordReservedWords: user keys beginning with "record:" would alias
// record keys, and so would the lock keys of a prefix with a segment
// "record"; both are refused before any I/O, like "done:".
func TestRecordReservedWords(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { rdb.Close() })
	b := newBackend(t, rdb, "")
	ctx := context.Background()
	for _, k := range []string{"record:syncguard:x", "record:"} {
		_, err := b.Acquire(ctx, k, time.Minute)
		wantCode(t, "Acquire "+k, err, lock.CodeInvalidArgument)
		_, _, err = b.Record(ctx, k)
		wantCode(t, "Record "+k, err, lock.CodeInvalidArgument)
		_, err = admin.StorageKeys(b, k)
		wantCode(t, "StorageKeys "+k, err, lock.CodeInvalidArgument)
	}
	for _, p := range []string{"record", "a:record", "record:b"} {
		_, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: p})
		wantCode(t, "New prefix "+p, err, lock.CodeInvalidArgument)
	}
	// Only the whole word is reserved.
	if _, err := admin.StorageKeys(b, "records:1"); err != nil {
		t.Errorf("StorageKeys(records:1) = %v", err)
	}
	if _, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "records"}); err != nil {
		t.Errorf("New(prefix records) = %v", err)
	}
}

// TestClusterRecordSlot stores records and done markers on a Redis Cluster:
// the record key is in the lock's hash slot (release.lua writes it with the
// lock and index keys), for a short key and for a hashed one, and records
// and done markers stay apart there too.
func TestClusterRecordSlot(t *testing.T) {
	t.Parallel()
	client := redistest.SharedCluster(t).Client(t)
	ctx := clusterCtx(t)
	prefix := redistest.Prefix(t)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if b.Layout() != redisbackend.LayoutCluster {
		t.Fatalf("Layout() = %v, want cluster", b.Layout())
	}
	testRecordsApart(t, client, b)

	// A key long enough (with a long prefix) for the record key to be hashed.
	long, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix + strings.Repeat("p", 200)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = long.Close() })
	for _, tc := range []struct {
		b   *redisbackend.Backend
		key string
	}{{b, "invoice:42"}, {long, strings.Repeat("x", lockdriver.MaxKeyBytes)}} {
		l, err := tc.b.Acquire(ctx, tc.key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.b.ReleaseRecord(ctx, l, []byte("r"), time.Minute); err != nil {
			t.Fatalf("ReleaseRecord: %v", err)
		}
		keys, err := admin.StorageKeys(tc.b, tc.key)
		if err != nil {
			t.Fatal(err)
		}
		lockSlot, err := client.ClusterKeySlot(ctx, keys.Lock).Result()
		if err != nil {
			t.Fatal(err)
		}
		recSlot, err := client.ClusterKeySlot(ctx, keys.Record).Result()
		if err != nil {
			t.Fatal(err)
		}
		if recSlot != lockSlot {
			t.Errorf("record key %s in slot %d, lock key in slot %d", keys.Record, recSlot, lockSlot)
		}
		if v, err := client.Get(ctx, keys.Record).Result(); err != nil || v != "r" {
			t.Errorf("GET %s = %q, %v; want the record", keys.Record, v, err)
		}
		if got, ok, err := tc.b.Record(ctx, tc.key); err != nil || !ok || string(got) != "r" {
			t.Errorf("Record = %q, %v, %v", got, ok, err)
		}
	}
}
