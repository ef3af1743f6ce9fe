package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestClusterShowRecord: on a Redis Cluster, show reads a key's done marker
// and its record (at "<prefix>:{T}:record:<lock key>") in one pipeline to
// the master of the lock's slot, and ls counts records apart from done
// markers.
func TestClusterShowRecord(t *testing.T) {
	c := redistest.SharedCluster(t)
	p := prefix(t)
	b := newBackend(t, c.Client(t), redisbackend.Options{Prefix: p})
	ctx := context.Background()

	l, err := b.Acquire(ctx, "both:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, l, time.Hour); err != nil {
		t.Fatal(err)
	}
	if l, err = b.Acquire(ctx, "both:1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l, []byte(`{"status":201}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	keys, err := admin.StorageKeys(b, "both:1")
	if err != nil {
		t.Fatal(err)
	}

	seed := []string{"--prefix", p, "--redis", "redis://" + c.Addrs()[0]}
	r := syncguard(t, append([]string{"show", "both:1", "--json"}, seed...)...)
	if r.code != 0 {
		t.Fatalf("show: status %d, stderr %q", r.code, r.err)
	}
	var st state
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatalf("show: %v\n%s", err, r.out)
	}
	if st.RecordKey != keys.Record || st.DoneKey != keys.Done || !st.HasRecord || st.Record == nil ||
		*st.Record != `{"status":201}` || st.Done == nil || *st.Done != "000000000000001" {
		t.Errorf("show both:1 on the cluster = %+v, want the done marker of fence 1 at %s and the record at %s",
			st, keys.Done, keys.Record)
	}

	r = syncguard(t, append([]string{"ls", "--json"}, seed...)...)
	out := lines(r.out)
	if r.code != 0 || len(out) == 0 {
		t.Fatalf("ls: status %d, stderr %q", r.code, r.err)
	}
	var totals struct{ Totals tally }
	if err := json.Unmarshal([]byte(out[len(out)-1]), &totals); err != nil {
		t.Fatal(err)
	}
	if tt := totals.Totals; tt.Done != 1 || tt.Records != 1 || tt.Locks != 0 || tt.Other != 0 {
		t.Errorf("ls totals %+v, want 1 done marker, 1 record, nothing else but index keys and fences", tt)
	}
}

// TestShowReservedRecordWord: "record:" is reserved like "done:" (a user
// key beginning with it would alias a record key), and so is a prefix
// segment "record".
func TestShowReservedRecordWord(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	for _, tc := range []struct {
		desc string
		args []string
		want string
	}{
		{"key", []string{"show", "--redis", urlOf(srv), "--prefix", p, "record:x"}, `"record:"`},
		{"prefix", []string{"ls", "--redis", urlOf(srv), "--prefix", "a:record"}, `"record"`},
	} {
		r := syncguard(t, tc.args...)
		if r.code != ExitUsage || r.out != "" || !strings.Contains(r.err, tc.want) {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want a usage error naming %s", tc.desc, r.code, r.out, r.err, tc.want)
		}
	}
}
