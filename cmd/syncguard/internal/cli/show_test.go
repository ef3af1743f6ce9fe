package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestShow shows a held key, a key with a done marker, one with a stored
// record, one with both and a free key, and checks them against LookupKey
// and the keys the library wrote.
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
	// A done marker and a record on one key (asynqlock and replay on one
	// prefix): each at its own key.
	both, err := b.Acquire(ctx, "both:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, both, time.Hour); err != nil {
		t.Fatal(err)
	}
	if both, err = b.Acquire(ctx, "both:1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, both, []byte("SGR\x01"), time.Hour); err != nil {
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
	keys, _ := admin.StorageKeys(b, "invoice:42")
	switch {
	case !st.Locked || st.Lock == nil:
		t.Fatalf("show invoice:42 = %+v, want locked", st)
	case st.Lock.Fence != info.Fence || st.Lock.Holder != info.IDHash ||
		!st.Lock.AcquiredAt.Equal(info.AcquiredAt) || !st.Lock.ExpiresAt.Equal(info.ExpiresAt):
		t.Errorf("show's lock %+v disagrees with LookupKey %+v", *st.Lock, *info)
	case st.LockKey != keys.Lock || st.FenceKey != keys.Fence || st.DoneKey != keys.Done || st.RecordKey != keys.Record:
		t.Errorf("show's keys %s, %s, %s, %s; want %+v", st.LockKey, st.FenceKey, st.DoneKey, st.RecordKey, keys)
	case st.HasRecord || st.Record != nil:
		t.Errorf("show invoice:42 has a record %v, want none (a done marker is not a record)", st.Record)
	case st.Counter != "2":
		t.Errorf("fence counter %q, want 2", st.Counter)
	case st.Done == nil || *st.Done != string(first.Fence) || st.DoneTTLMs <= 0:
		t.Errorf("done marker %v (ttl %dms), want the first fence %s", st.Done, st.DoneTTLMs, first.Fence)
	}

	st = show("payment:9")
	recKeys, _ := admin.StorageKeys(b, "payment:9")
	if st.Locked || st.Counter != "1" || !st.HasRecord || st.Record == nil || *st.Record != `{"status":200}` ||
		st.RecordTTLMs <= 0 || st.RecordKey != recKeys.Record || st.Done != nil {
		t.Errorf("show payment:9 = %+v, want free with the record and no done marker", st)
	}
	st = show("both:1")
	if st.Done == nil || *st.Done != "000000000000001" || !st.HasRecord || st.Record == nil || *st.Record != "SGR\x01" {
		t.Errorf("show both:1 = %+v, want the done marker of fence 1 and the record", st)
	}
	st = show("never")
	if st.Locked || st.Counter != "" || st.Done != nil || st.HasRecord || st.Record != nil {
		t.Errorf("show never = %+v, want free, no counter, no marker, no record", st)
	}
	// JSON: the record key is always there, and whether there is a record.
	r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "never", "--json")
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.out), &raw); err != nil {
		t.Fatal(err)
	}
	if raw["recordKey"] != keysOf(t, b, "never").Record || raw["hasRecord"] != false {
		t.Errorf("show never --json: recordKey %v, hasRecord %v", raw["recordKey"], raw["hasRecord"])
	}

	// The text form.
	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "invoice:42")
	for _, want := range []string{
		"state          locked",
		"fence          " + string(l.Fence),
		"holder         " + info.IDHash,
		"fence counter  " + keys.Fence + " = 2",
		"done marker    " + keys.Done + ": done by fence " + string(first.Fence),
		"record         " + keys.Record + ": none",
	} {
		if !strings.Contains(r.out, want+"") {
			t.Errorf("show output lacks %q:\n%s", want, r.out)
		}
	}
	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "payment:9")
	for _, want := range []string{
		"done marker    none",
		"record         " + recKeys.Record + `: 14 bytes, for `,
		`: "{\"status\":200}"`,
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("show payment:9 output lacks %q:\n%s", want, r.out)
		}
	}
	// A record left at the done marker's key by a version that kept
	// records there: shown as a done marker that is not a fence.
	old := keysOf(t, b, "old:1")
	rdb.Set(ctx, old.Done, "SGR old record", time.Minute)
	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "old:1")
	if want := "done marker    " + old.Done + ": not a fence (14 bytes"; !strings.Contains(r.out, want) ||
		!strings.Contains(r.out, "record         "+old.Record+": none") {
		t.Errorf("show old:1 output lacks %q and no record:\n%s", want, r.out)
	}
}

// keysOf returns the storage keys of key, failing the test otherwise.
func keysOf(t *testing.T, b *redisbackend.Backend, key string) admin.Keys {
	t.Helper()
	k, err := admin.StorageKeys(b, key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestShowNeverLocked: a key that was never locked says so; with fence
// stripes, where that cannot be told, the counter the key would draw from
// is labelled as the stripe's, shared with other keys, not as the key's
// own history.
func TestShowNeverLocked(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		desc       string
		stripes    int
		want, not  []string // in show never's output, and not in it
		otherState string   // show other's state line, after a lock and release
	}{
		{"per-key counters", 0, []string{"state          free (never locked", ": none yet"}, []string{"stripe"},
			"state          free\n"},
		{"stripes", 1, []string{"state          free\n", "(a stripe's counter, shared by every key hashed to it: not this key's history)"},
			[]string{"never locked"}, "state          free\n"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			p := prefix(t)
			b := newBackend(t, rdb, redisbackend.Options{Prefix: p, FenceStripes: tc.stripes})
			l, err := b.Acquire(ctx, "other", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Release(ctx, l.ID); err != nil {
				t.Fatal(err)
			}
			out := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "never").out
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("show never lacks %q:\n%s", want, out)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(out, not) {
					t.Errorf("show never has %q:\n%s", not, out)
				}
			}
			if out := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "other").out; !strings.Contains(out, tc.otherState) {
				t.Errorf("show other (locked and released) lacks %q:\n%s", tc.otherState, out)
			}
		})
	}
}

// TestAgeNeverNegative: a grant stamped by a clock a little ahead of the
// server read (a failed-over master, another cluster node) shows as just
// granted, not as granted in the future.
func TestAgeNeverNegative(t *testing.T) {
	for _, tc := range []struct{ now, acquired, want int64 }{{1000, 400, 600}, {1000, 1000, 0}, {1000, 1012, 0}} {
		if got := age(tc.now, tc.acquired); got != tc.want {
			t.Errorf("age(%d, %d) = %d, want %d", tc.now, tc.acquired, got, tc.want)
		}
	}
}

// TestShowDecodesRecord: a stored response prints decoded (status, fence,
// headers, trailers, body length and its start as text), not as escaped
// bytes; so does a record of a completed request.
func TestShowDecodesRecord(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	ctx := context.Background()
	store := func(key string, r *wire.Record) lock.Fence {
		t.Helper()
		l, err := b.Acquire(ctx, key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		r.Fence = l.Fence
		if err := b.ReleaseRecord(ctx, l, r.Encode(), time.Hour); err != nil {
			t.Fatal(err)
		}
		return l.Fence
	}
	f := store("order:1", &wire.Record{Status: 201, Header: http.Header{"Content-Type": {"application/json"}},
		Trailer: http.Header{"X-Sum": {"c0ffee"}}, Body: []byte(`{"id":1}`)})
	out := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "order:1").out
	for _, want := range []string{
		"status 201, stored by fence " + string(f),
		"  header       Content-Type: application/json",
		"  trailer      X-Sum: c0ffee",
		`  body         8 bytes: "{\"id\":1}"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show order:1 lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `SGR\x02`) {
		t.Errorf("show order:1 prints the record's raw bytes:\n%s", out)
	}
	// --json: the response decoded, and not the stored bytes.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(syncguard(t, "show", "--json", "--redis", urlOf(srv), "--prefix", p, "order:1").out), &raw); err != nil {
		t.Fatal(err)
	}
	var resp responseShow
	if err := json.Unmarshal(raw["response"], &resp); err != nil || resp.Status != 201 || resp.BodyText != `{"id":1}` {
		t.Errorf("show --json order:1: response %s (%v), want status 201 and its body", raw["response"], err)
	}
	if v, ok := raw["record"]; ok || string(raw["recordBytes"]) == "" {
		t.Errorf("show --json order:1: record %s, recordBytes %s; want the size, not the stored bytes", v, raw["recordBytes"])
	}
	f = store("order:2", &wire.Record{Status: 200, Completed: true})
	if out := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "order:2").out; !strings.Contains(out, "status 200, completed by fence "+string(f)) {
		t.Errorf("show order:2 lacks the completed record:\n%s", out)
	}
}
