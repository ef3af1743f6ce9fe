package redisbackend_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func TestReleaseDone(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	if done, err := b.IsDone(ctx, "job:1"); err != nil || done {
		t.Fatalf("IsDone before any run = %v, %v; want false", done, err)
	}
	l, err := b.Acquire(ctx, "job:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, l, 2*time.Second); err != nil {
		t.Fatalf("ReleaseDone: %v", err)
	}
	// Released and marked in one step: the lock is free, the marker set
	// with the run's fence and the done TTL.
	if locked, _ := b.IsLocked(ctx, "job:1"); locked {
		t.Error("key still locked after ReleaseDone")
	}
	if done, err := b.IsDone(ctx, "job:1"); err != nil || !done {
		t.Errorf("IsDone after ReleaseDone = %v, %v; want true", done, err)
	}
	const marker = "syncguard:done:syncguard:job:1"
	if v := rdb.Get(ctx, marker).Val(); v != string(l.Fence) {
		t.Errorf("marker value = %q, want the fence %s", v, l.Fence)
	}
	if pttl := rdb.PTTL(ctx, marker).Val(); pttl <= 0 || pttl > 2*time.Second {
		t.Errorf("marker PTTL = %v, want (0, 2s]", pttl)
	}

	// A lease that is not held writes no marker.
	l2, err := b.Acquire(ctx, "job:2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l2.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, l2, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ReleaseDone of a released lease = %v, want ErrNotHeld", err)
	}
	if done, _ := b.IsDone(ctx, "job:2"); done {
		t.Error("a failed ReleaseDone wrote a marker")
	}

	// A lease whose Key does not match its id is refused and marks nothing.
	l3, err := b.Acquire(ctx, "job:3", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	forged := l3
	forged.Key = "job:4"
	if err := b.ReleaseDone(ctx, forged, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ReleaseDone with a mismatched key = %v, want ErrNotHeld", err)
	}
	if done, _ := b.IsDone(ctx, "job:4"); done {
		t.Error("mismatched ReleaseDone wrote a marker")
	}
	if locked, _ := b.IsLocked(ctx, "job:3"); !locked {
		t.Error("mismatched ReleaseDone released the real lock")
	}

	// Bad input fails before any I/O.
	for _, tc := range []struct {
		desc string
		l    lock.Lease
		ttl  time.Duration
	}{
		{"bad id", lock.Lease{Key: "k", ID: "short"}, time.Second},
		{"empty key", lock.Lease{Key: "", ID: l3.ID}, time.Second},
		{"zero ttl", l3, 0},
	} {
		if err := b.ReleaseDone(ctx, tc.l, tc.ttl); lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("%s: err = %v, want InvalidArgument", tc.desc, err)
		}
	}
	if _, err := b.IsDone(ctx, ""); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("IsDone(\"\") err = %v, want InvalidArgument", err)
	}
}

func TestReleaseRecord(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	if rec, ok, err := b.Record(ctx, "req:1"); err != nil || ok || rec != nil {
		t.Fatalf("Record before any run = %q, %v, %v; want nothing", rec, ok, err)
	}
	l, err := b.Acquire(ctx, "req:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Any bytes, NUL and invalid UTF-8 included, come back as stored.
	want := []byte("HTTP 201\x00\xff{\"id\":1}")
	if err := b.ReleaseRecord(ctx, l, want, 2*time.Second); err != nil {
		t.Fatalf("ReleaseRecord: %v", err)
	}
	if locked, _ := b.IsLocked(ctx, "req:1"); locked {
		t.Error("key still locked after ReleaseRecord")
	}
	rec, ok, err := b.Record(ctx, "req:1")
	if err != nil || !ok || string(rec) != string(want) {
		t.Errorf("Record = %q, %v, %v; want %q", rec, ok, err, want)
	}
	// A record is not a done marker: it has its own key.
	if done, err := b.IsDone(ctx, "req:1"); err != nil || done {
		t.Errorf("IsDone after ReleaseRecord = %v, %v; want false (records are not done markers)", done, err)
	}
	if n := rdb.Exists(ctx, "syncguard:done:syncguard:req:1").Val(); n != 0 {
		t.Errorf("ReleaseRecord wrote the done-marker key")
	}
	if pttl := rdb.PTTL(ctx, "syncguard:record:syncguard:req:1").Val(); pttl <= 0 || pttl > 2*time.Second {
		t.Errorf("record PTTL = %v, want (0, 2s]", pttl)
	}

	// A lease that is not held stores nothing.
	l2, err := b.Acquire(ctx, "req:2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l2.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l2, want, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ReleaseRecord of a released lease = %v, want ErrNotHeld", err)
	}
	if _, ok, _ := b.Record(ctx, "req:2"); ok {
		t.Error("a record was stored for a lease that was not held")
	}
	// An empty record is a record.
	l3, err := b.Acquire(ctx, "req:3", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l3, nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := b.Record(ctx, "req:3"); err != nil || !ok || len(rec) != 0 {
		t.Errorf("Record of an empty record = %q, %v, %v; want empty, true", rec, ok, err)
	}
}
