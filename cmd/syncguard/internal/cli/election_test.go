package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// writeTerm writes a term of an election on key by hand, as the stored
// format has it (docs/redis-keys.md): the next fence from the key's
// counter, lock data naming owner, and its index key, both with PX ttl.
// It does not depend on how lock/election writes the owner.
func writeTerm(t *testing.T, rdb *redis.Client, b *redisbackend.Backend, key, owner string, ttl time.Duration) (lock.Fence, string) {
	t.Helper()
	fence, id, err := newTerm(rdb, b, key, owner, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return fence, id
}

// newTerm is writeTerm, for a goroutine of a test.
func newTerm(rdb *redis.Client, b *redisbackend.Backend, key, owner string, ttl time.Duration) (lock.Fence, string, error) {
	ctx := context.Background()
	keys, err := admin.StorageKeys(b, key)
	if err != nil {
		return "", "", err
	}
	n, err := rdb.Incr(ctx, keys.Fence).Uint64()
	if err != nil {
		return "", "", err
	}
	fence, err := lockdriver.FormatFence(n)
	if err != nil {
		return "", "", err
	}
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		return "", "", err
	}
	id := lockdriver.NewLockID()
	acq := now.UnixMilli()
	data := fmt.Sprintf(`{"lockId":"%s","expiresAtMs":%d,"acquiredAtMs":%d,"key":"%s","fence":"%s","owner":"%s"}`,
		id, acq+ttl.Milliseconds(), acq, wire.JSONText(key), fence, wire.JSONText(owner))
	index := wire.IndexKey(strings.TrimSuffix(keys.Lock, ":"+key), id)
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, keys.Lock, data, ttl)
		p.Set(ctx, index, keys.Lock, ttl)
		return nil
	})
	return fence, id, err
}

// TestShowElection: show on a key whose lock data names an owner prints
// the leader's identity, the term's fence and the time left, in text and
// JSON; a plain lock shows no leader.
func TestShowElection(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()

	fence, id := writeTerm(t, rdb, b, "scheduler", "pod-a \"blue\"", time.Minute)
	if _, err := b.Acquire(ctx, "plain", time.Minute); err != nil {
		t.Fatal(err)
	}

	r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "scheduler", "--json")
	if r.code != 0 || r.err != "" {
		t.Fatalf("show --json: status %d, stderr %q", r.code, r.err)
	}
	var st state
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if !st.Locked || st.Lock.Election == nil || st.Lock.Election.Leader != "pod-a \"blue\"" || st.Lock.Fence != fence {
		t.Fatalf("show --json on an election: %s", r.out)
	}
	if st.Lock.TTLMs <= 0 || st.Lock.TTLMs > time.Minute.Milliseconds() || st.Lock.Holder != lockdriver.HashKey(id) {
		t.Errorf("show --json: ttl %d ms, holder %q; want (0, 60000] and the hash of the lock id", st.Lock.TTLMs, st.Lock.Holder)
	}

	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "scheduler")
	if r.code != 0 || r.err != "" {
		t.Fatalf("show: status %d, stderr %q", r.code, r.err)
	}
	for _, want := range []string{
		"state          election: a leader holds the term\n",
		"leader         pod-a \"blue\"\n",
		"term fence     " + string(fence) + "\n",
		"time left      ",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("show does not print %q:\n%s", want, r.out)
		}
	}

	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "plain")
	if r.code != 0 || !strings.Contains(r.out, "state          locked\n") || strings.Contains(r.out, "leader") {
		t.Errorf("show on a plain lock: status %d:\n%s", r.code, r.out)
	}
}

// TestLsElection: ls marks the lock of an election's term with its leader
// (text and JSON) and counts elections in its totals; a plain lock next
// to it is listed as before.
func TestLsElection(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()

	fence, _ := writeTerm(t, rdb, b, "scheduler", "pod-a", time.Minute)
	plain, err := b.Acquire(ctx, "plain", time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	r := syncguard(t, "ls", "--redis", urlOf(srv), "--prefix", p)
	if r.code != 0 || r.err != "" {
		t.Fatalf("ls: status %d, stderr %q", r.code, r.err)
	}
	var electionLine, plainLine string
	for _, l := range lines(r.out) {
		switch {
		case strings.HasSuffix(l, "  scheduler"):
			electionLine = l
		case strings.HasSuffix(l, "  plain"):
			plainLine = l
		}
	}
	if !strings.HasPrefix(electionLine, string(fence)+"  ") || !strings.Contains(electionLine, "  election: pod-a  ") {
		t.Errorf("ls line of the election %q: want its fence and \"election: pod-a\"\n%s", electionLine, r.out)
	}
	if !strings.Contains(plainLine, "  "+lockdriver.HashKey(plain.ID)+"  ") || strings.Contains(plainLine, "election") {
		t.Errorf("ls line of the plain lock %q\n%s", plainLine, r.out)
	}
	if out := lines(r.out); !strings.HasPrefix(out[len(out)-1], "2 locks (1 election) (scanned ") {
		t.Errorf("ls totals %q, want 2 locks (1 election)", out[len(out)-1])
	}

	r = syncguard(t, "ls", "--redis", urlOf(srv), "--prefix", p, "--json")
	if r.code != 0 || r.err != "" {
		t.Fatalf("ls --json: status %d, stderr %q", r.code, r.err)
	}
	rows := map[string]lsRow{}
	for _, l := range lines(r.out) {
		var row lsRow
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		rows[row.Key] = row
	}
	if e := rows["scheduler"].Election; e == nil || e.Leader != "pod-a" || rows["plain"].Election != nil {
		t.Errorf("ls --json: election %+v, plain %+v\n%s", e, rows["plain"].Election, r.out)
	}
	if !strings.Contains(lines(r.out)[len(lines(r.out))-1], `"elections":1`) {
		t.Errorf("ls --json totals: %s", lines(r.out)[len(lines(r.out))-1])
	}
}

// TestWatchCountsTerms: watch counts every new fence on an election's key
// as a term (those that came and went between samples too), and nothing
// on a plain lock that changes hands as often.
func TestWatchCountsTerms(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	writeTerm(t, rdb, b, "scheduler", "pod-0", time.Minute)
	wg.Add(2)
	go func() { // a new term every 10 ms or so, each overwriting the last
		defer wg.Done()
		for i := 1; ctx.Err() == nil; i++ {
			time.Sleep(10 * time.Millisecond)
			if _, _, err := newTerm(rdb, b, "scheduler", fmt.Sprintf("pod-%d", i%3), time.Minute); err != nil && ctx.Err() == nil {
				t.Errorf("writing a term: %v", err)
				return
			}
		}
	}()
	go func() { // a plain lock changing hands as often
		defer wg.Done()
		for ctx.Err() == nil {
			l, err := b.Acquire(ctx, "plain", time.Minute)
			if err != nil {
				continue
			}
			time.Sleep(10 * time.Millisecond)
			_ = b.Release(context.Background(), l.ID)
		}
	}()

	r := syncguard(t, "watch", "--redis", urlOf(srv), "--prefix", p, "--interval", "300ms", "--count", "3", "--json", "--top", "5")
	if r.code != 0 || r.err != "" {
		t.Fatalf("watch: status %d, stderr %q", r.code, r.err)
	}
	var total int64
	for _, l := range lines(r.out) {
		var row watchRow
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		var scheduler int64
		for _, bz := range row.Busiest {
			if bz.Key == "scheduler" {
				scheduler = bz.Acquired
			}
		}
		total += row.Terms
		// The key is held at every sample, so the fences count every term
		// between them (per-key counters).
		if row.Elections != 1 || row.Terms < 2 || row.Terms != scheduler || row.TermsTotal != total {
			t.Errorf("watch row: elections %d, terms %d (scheduler's grants %d), total %d (want %d)\n%s",
				row.Elections, row.Terms, scheduler, row.TermsTotal, total, l)
		}
	}

	r = syncguard(t, "watch", "--redis", urlOf(srv), "--prefix", p, "--interval", "300ms", "--count", "1")
	if out := lines(r.out); r.code != 0 || len(out) != 2 || !strings.Contains(out[1], "; elections 1, new terms ") {
		t.Errorf("watch: status %d, stderr %q:\n%s", r.code, r.err, r.out)
	}
}

// TestShowDuringLead: show on the key of an election.Lead run shows the
// term fn was given and its leader's identity, which Lead stores in the
// lock data before fn runs.
func TestShowDuringLead(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var st state
	var term lock.Lease
	err := election.Lead(ctx, b, "scheduler", "pod-a", func(_ context.Context, l lock.Lease) error {
		term = l
		r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "scheduler", "--json")
		if r.code != 0 || r.err != "" {
			return fmt.Errorf("show: status %d, stderr %q", r.code, r.err)
		}
		cancel() // one term is enough: Lead releases it and returns
		return json.Unmarshal([]byte(r.out), &st)
	}, election.WithTTL(10*time.Second))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead = %v, want context.Canceled", err)
	}
	if !st.Locked || st.Lock.Fence != term.Fence || st.Lock.Holder != lockdriver.HashKey(term.ID) {
		t.Fatalf("show during the term %+v: %+v", term, st.Lock)
	}
	if st.Lock.Election == nil {
		t.Fatalf("show during the term found no election (Lead proclaims its identity before fn runs): %+v", st.Lock)
	}
	if st.Lock.Election.Leader != "pod-a" {
		t.Errorf("show during the term: leader %q, want pod-a", st.Lock.Election.Leader)
	}
}
