package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestLsAgreesWithLookupKey lists locks taken by the library, next to
// keys that are not locks, and checks every line against LookupKey.
func TestLsAgreesWithLookupKey(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()

	keys := []string{"invoice:42", "order:7", "report daily", "line\nbreak"}
	leases := map[string]lock.Lease{}
	for _, k := range keys {
		l, err := b.Acquire(ctx, k, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		leases[k] = l
	}
	// Not locks: a released key (index tombstone, fence counter, done
	// marker), another (index tombstone, fence counter, stored record), a
	// foreign value, a lock of a longer prefix.
	done, err := b.Acquire(ctx, "job:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, done, time.Minute); err != nil {
		t.Fatal(err)
	}
	replayed, err := b.Acquire(ctx, "req:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, replayed, []byte("SGR"), time.Minute); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, p+":foreign", "hello", time.Minute)
	nested := newBackend(t, rdb, redisbackend.Options{Prefix: p + ":tenant"})
	if _, err := nested.Acquire(ctx, "x", time.Minute); err != nil {
		t.Fatal(err)
	}

	r := syncguard(t, "ls", "--redis", urlOf(srv), "--prefix", p, "--json")
	if r.code != 0 || r.err != "" {
		t.Fatalf("ls --json: status %d, stderr %q", r.code, r.err)
	}
	out := lines(r.out)
	var totals struct{ Totals tally }
	if err := json.Unmarshal([]byte(out[len(out)-1]), &totals); err != nil {
		t.Fatalf("last line %q: %v", out[len(out)-1], err)
	}
	seen := map[string]bool{}
	for _, line := range out[:len(out)-1] {
		var row lsRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		l, ok := leases[row.Key]
		if !ok {
			t.Errorf("ls lists %q, which is not a lock of this prefix", row.Key)
			continue
		}
		seen[row.Key] = true
		info, err := b.LookupKey(ctx, row.Key)
		if err != nil || info == nil {
			t.Fatalf("LookupKey(%q) = %v, %v", row.Key, info, err)
		}
		if row.Fence != info.Fence || row.Holder != info.IDHash ||
			!row.AcquiredAt.Equal(info.AcquiredAt) || !row.ExpiresAt.Equal(info.ExpiresAt) {
			t.Errorf("ls row %+v disagrees with LookupKey %+v", row, *info)
		}
		if row.TTLMs <= 0 || row.TTLMs > time.Minute.Milliseconds() || row.AgeMs < 0 || row.AgeMs > 30_000 {
			t.Errorf("%q: age %dms, ttl %dms; want within [0, 30s] and (0, 1m]", row.Key, row.AgeMs, row.TTLMs)
		}
		if strings.Contains(line, l.ID) {
			t.Errorf("ls printed the lock id of %q: %s", row.Key, line)
		}
	}
	if len(seen) != len(keys) {
		t.Errorf("ls listed %d of the %d locks: %v", len(seen), len(keys), seen)
	}
	// 4 locks and 2 released keys: 6 index keys and fence counters, 1 done
	// marker, 1 record, the configuration record; the foreign value and the
	// nested prefix's lock are other, and its index key, fence counter and
	// configuration record, "<p>:tenant:id:...", "<p>:tenant:fence:..." and
	// "<p>:tenant:config:backend", are other too.
	want := tally{Scanned: 24, Locks: 4, Index: 6, Fence: 6, Done: 1, Records: 1, Config: 1, Other: 5}
	if totals.Totals != want {
		t.Errorf("totals %+v, want %+v", totals.Totals, want)
	}

	// The text form: a header, a line per lock (the key with a newline
	// quoted), the totals.
	r = syncguard(t, "ls", "--redis", urlOf(srv), "--prefix", p)
	text := lines(r.out)
	if r.code != 0 || len(text) != len(keys)+2 || text[0] != lsHeader {
		t.Fatalf("ls: status %d, output:\n%s", r.code, r.out)
	}
	if !strings.Contains(r.out, leases["invoice:42"].Fence.String()) || !strings.Contains(r.out, `"line\nbreak"`) ||
		!strings.HasPrefix(text[len(text)-1], "4 locks (scanned") ||
		!strings.Contains(text[len(text)-1], "1 done marker, 1 record, 0 waiter queues") {
		t.Errorf("ls output:\n%s", r.out)
	}

	// --match filters by the application's key.
	r = syncguard(t, "ls", "--redis", urlOf(srv), "--prefix", p, "--match", "invoice:*")
	if text := lines(r.out); r.code != 0 || len(text) != 3 || !strings.HasSuffix(text[1], " invoice:42") {
		t.Errorf("ls --match invoice:*: status %d, output:\n%s", r.code, r.out)
	}
}
