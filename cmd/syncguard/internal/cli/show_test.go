package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestShow shows a held key, a key with a done marker, one with a stored
// record and a free key, and checks them against LookupKey and the keys
// the library wrote.
func TestShow(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()

	first, err := b.Acquire(ctx, "invoice:42", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, first, time.Hour); err != nil {
		t.Fatal(err)
	}
	l, err := b.Acquire(ctx, "invoice:42", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := b.Acquire(ctx, "payment:9", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, rec, []byte(`{"status":200}`), time.Hour); err != nil {
		t.Fatal(err)
	}

	show := func(key string) state {
		t.Helper()
		r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, key, "--json")
		if r.code != 0 || r.err != "" {
			t.Fatalf("show %s: status %d, stderr %q", key, r.code, r.err)
		}
		if strings.Contains(r.out, l.ID) || strings.Contains(r.out, first.ID) {
			t.Errorf("show %s printed a lock id:\n%s", key, r.out)
		}
		var st state
		if err := json.Unmarshal([]byte(r.out), &st); err != nil {
			t.Fatalf("show %s: %v\n%s", key, err, r.out)
		}
		return st
	}

	st := show("invoice:42")
	info, err := b.LookupKey(ctx, "invoice:42")
	if err != nil || info == nil {
		t.Fatalf("LookupKey = %v, %v", info, err)
	}
	keys, _ := b.StorageKeys("invoice:42")
	switch {
	case !st.Locked || st.Lock == nil:
		t.Fatalf("show invoice:42 = %+v, want locked", st)
	case st.Lock.Fence != info.Fence || st.Lock.Holder != info.IDHash ||
		!st.Lock.AcquiredAt.Equal(info.AcquiredAt) || !st.Lock.ExpiresAt.Equal(info.ExpiresAt):
		t.Errorf("show's lock %+v disagrees with LookupKey %+v", *st.Lock, *info)
	case st.LockKey != keys.Lock || st.FenceKey != keys.Fence || st.DoneKey != keys.Done:
		t.Errorf("show's keys %s, %s, %s; want %+v", st.LockKey, st.FenceKey, st.DoneKey, keys)
	case st.Counter != "2":
		t.Errorf("fence counter %q, want 2", st.Counter)
	case st.Done == nil || *st.Done != string(first.Fence) || st.DoneTTLMs <= 0:
		t.Errorf("done marker %v (ttl %dms), want the first fence %s", st.Done, st.DoneTTLMs, first.Fence)
	}

	st = show("payment:9")
	if st.Locked || st.Counter != "1" || st.Done == nil || *st.Done != `{"status":200}` {
		t.Errorf("show payment:9 = %+v, want free with the record", st)
	}
	st = show("never")
	if st.Locked || st.Counter != "" || st.Done != nil {
		t.Errorf("show never = %+v, want free, no counter, no marker", st)
	}

	// The text form.
	r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "invoice:42")
	for _, want := range []string{
		"state          locked",
		"fence          " + string(l.Fence),
		"holder         " + info.IDHash,
		"fence counter  " + keys.Fence + " = 2",
		"done marker    " + keys.Done + ": done by fence " + string(first.Fence),
	} {
		if !strings.Contains(r.out, want+"") {
			t.Errorf("show output lacks %q:\n%s", want, r.out)
		}
	}
}
