package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// configCase is an application backend the command must read without
// --layout or --fence-stripes.
type configCase struct {
	desc   string
	client func(t *testing.T) (redis.UniversalClient, []string) // the application's client, the command's --redis flags
	opts   redisbackend.Options
}

func configCases() []configCase {
	single := func(t *testing.T) (redis.UniversalClient, []string) {
		srv := redistest.Shared(t)
		return srv.Client(t), []string{"--redis", urlOf(srv)}
	}
	cluster := func(t *testing.T) (redis.UniversalClient, []string) {
		c := redistest.SharedCluster(t)
		return c.Client(t), []string{"--redis", "redis://" + c.Addrs()[0]}
	}
	return []configCase{
		{desc: "striped", client: single, opts: redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes}},
		// A counter per key, in the cluster layout on one server: the
		// command's own default there is the single layout.
		{desc: "per key, cluster layout", client: single, opts: redisbackend.Options{Layout: redisbackend.LayoutCluster}},
		{desc: "cluster, striped", client: cluster, opts: redisbackend.Options{FenceStripes: 64}},
	}
}

// TestConfigCLI runs show, ls and release --force against a striped, a
// per-key and a cluster backend, without --layout or --fence-stripes: the
// command names the keys as the backend recorded its configuration. Each
// key is checked against the backend's own StorageKeys and the lock it
// holds.
func TestConfigCLI(t *testing.T) {
	for _, tc := range configCases() {
		t.Run(tc.desc, func(t *testing.T) {
			rdb, flags := tc.client(t)
			p := prefix(t)
			tc.opts.Prefix = p
			b := newBackend(t, rdb, tc.opts)
			ctx, cancel := context.WithCancel(context.Background())
			waiterDone := make(chan struct{})
			t.Cleanup(func() { cancel(); <-waiterDone })
			args := append([]string{"--prefix", p}, flags...)

			l, err := b.Acquire(ctx, "invoice:42", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			keys, _ := admin.StorageKeys(b, "invoice:42")
			// A full limit of 2 with a waiter queued.
			slots := []lock.Lease{takeSlot(t, b, "exports:ops", 2, time.Minute), takeSlot(t, b, "exports:ops", 2, time.Minute)}
			go func() {
				defer close(waiterDone)
				_, _ = lock.Acquire(ctx, b, "exports:ops", lock.WithLimit(2), lock.WithWait(time.Minute), lock.WithRetry(lock.Retry{BaseDelay: 30 * time.Second}))
			}()
			limitKeys, _ := admin.StorageKeys(b, "exports:ops")
			for rdb.ZCard(ctx, p+":queue:"+limitKeys.Lock).Val() == 0 {
				time.Sleep(10 * time.Millisecond)
			}

			r := syncguard(t, append([]string{"show", "--json", "invoice:42"}, args...)...)
			var st state
			if r.code != 0 || json.Unmarshal([]byte(r.out), &st) != nil {
				t.Fatalf("show: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
			}
			if r.err != "" || !st.Locked || st.Lock.Fence != l.Fence || st.LockKey != keys.Lock || st.FenceKey != keys.Fence ||
				st.Counter == "" || st.Counter != rdb.Get(ctx, keys.Fence).Val() {
				t.Errorf("show invoice:42 = %+v (stderr %q); want locked with fence %s at %s, counter %s", st, r.err, l.Fence, keys.Lock, keys.Fence)
			}

			r = syncguard(t, append([]string{"ls", "--json"}, args...)...)
			out := lines(r.out)
			var totals struct{ Totals tally }
			if r.code != 0 || json.Unmarshal([]byte(out[len(out)-1]), &totals) != nil {
				t.Fatalf("ls: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
			}
			if tt := totals.Totals; tt.Locks != 1 || tt.Limits != 1 || tt.Slots != 2 || tt.Queue != 1 || tt.Config != 1 || tt.Other != 0 {
				t.Errorf("ls totals %+v, want 1 lock, 1 limit of 2 slots, 1 waiter queue, the config record, nothing other", tt)
			}
			// The same with --match: the waiter queue is counted too.
			r = syncguard(t, append([]string{"ls", "--json", "--match", "exports:*"}, args...)...)
			out = lines(r.out)
			if r.code != 0 || len(out) != 2 || json.Unmarshal([]byte(out[len(out)-1]), &totals) != nil ||
				totals.Totals.Limits != 1 || totals.Totals.Queue != 1 || totals.Totals.NotMatching != 1 {
				t.Errorf("ls --match exports:*: status %d, stderr %q, totals %+v, output:\n%s", r.code, r.err, totals.Totals, r.out)
			}

			r = syncguard(t, append([]string{"release", "--force", "--yes", "--slot", string(slots[0].Fence), "exports:ops"}, args...)...)
			counter := rdb.Get(ctx, limitKeys.Fence).Val()
			if r.code != 0 || counter == "" || !strings.Contains(r.out, "kept     "+limitKeys.Fence+" = "+counter+" ") {
				t.Errorf("release --slot: status %d, stderr %q, want the kept counter %s = %s, output:\n%s", r.code, r.err, limitKeys.Fence, counter, r.out)
			}
		})
	}
}

// TestConfigDoctor: instances that recorded different configurations on
// one prefix are a severe finding of doctor, and every command notes on
// stderr which configuration it names the keys by; flags that differ from
// the record are noted too.
func TestConfigDoctor(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	args := []string{"--redis", urlOf(srv), "--prefix", p}
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})

	r := syncguard(t, append([]string{"doctor", "--json"}, args...)...)
	if f := findingOf(t, r, admin.CheckConfig); f.Severity != "ok" || r.err != "" {
		t.Errorf("doctor with one configuration: config finding %+v, stderr %q; want ok", f, r.err)
	}
	r = syncguard(t, append([]string{"ls", "--fence-stripes", "16"}, args...)...)
	if r.code != 0 || !strings.Contains(r.err, "note: naming keys as the flags say (layout=single fenceStripes=16), not as the application recorded (layout=single fenceStripes=0)") {
		t.Errorf("ls with other flags: status %d, stderr %q", r.code, r.err)
	}

	time.Sleep(5 * time.Millisecond)
	newBackend(t, rdb, redisbackend.Options{Prefix: p, FenceStripes: 16}) // a newer instance, configured otherwise
	r = syncguard(t, append([]string{"doctor", "--json"}, args...)...)
	f := findingOf(t, r, admin.CheckConfig)
	if r.code != ExitSevere || f.Severity != "severe" || !strings.Contains(f.Message, "layout=single fenceStripes=0") ||
		!strings.Contains(r.err, "recorded 2 configurations; naming keys as the newest (layout=single fenceStripes=16)") {
		t.Errorf("doctor with two configurations: status %d, config finding %+v, stderr %q; want 3, severe, the note", r.code, f, r.err)
	}
	// The text form names the finding like the others.
	r = syncguard(t, append([]string{"doctor"}, args...)...)
	if !regexp.MustCompile(`(?m)^severe config: instances on this prefix recorded another configuration`).MatchString(r.out) {
		t.Errorf("doctor:\n%s", r.out)
	}
	_ = b
}

// findingOf decodes doctor --json and returns its finding named name.
func findingOf(t *testing.T, r result, name string) (f struct{ Name, Severity, Message, Advice string }) {
	t.Helper()
	var got struct {
		Findings []struct{ Name, Severity, Message, Advice string }
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("doctor --json: status %d, stderr %q, output %q: %v", r.code, r.err, r.out, err)
	}
	for _, f := range got.Findings {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("doctor --json has no %q finding:\n%s", name, r.out)
	return f
}

// syncBuffer is an output that a test reads while a command writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// watchRows decodes watch --json.
func watchRows(t *testing.T, out string) []watchRow {
	t.Helper()
	var rows []watchRow
	for _, line := range lines(out) {
		if line == "" {
			continue
		}
		var row watchRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("watch --json line %q: %v", line, err)
		}
		rows = append(rows, row)
	}
	return rows
}

// TestWatchCountsGrants runs watch --json while the application makes
// grants as a service of Idempotency-Keys does (a new key each request,
// held a moment) next to a few keys that change hands all the time, on a
// striped, a per-key and a cluster backend: the grants watch counts are
// within 5% of those made, and so are the releases.
func TestWatchCountsGrants(t *testing.T) {
	for _, tc := range configCases() {
		t.Run(tc.desc, func(t *testing.T) {
			rdb, flags := tc.client(t)
			_ = rdb
			p := prefix(t)
			tc.opts.Prefix = p
			b := newBackend(t, rdb, tc.opts)

			wctx, stop := context.WithCancel(context.Background())
			defer stop()
			out := &syncBuffer{}
			done := make(chan result, 1)
			go func() {
				var errOut bytes.Buffer
				code := Run(wctx, append([]string{"watch", "--json", "--interval", "250ms", "--prefix", p}, flags...),
					Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: &errOut, Getenv: func(string) string { return "" }})
				done <- result{out: out.String(), err: errOut.String(), code: code}
			}()
			waitLines := func(n int) {
				t.Helper()
				for deadline := time.Now().Add(20 * time.Second); len(lines(strings.TrimSpace(out.String()))) < n || strings.TrimSpace(out.String()) == ""; {
					if time.Now().After(deadline) {
						t.Fatalf("watch printed %q in 20s, want %d lines", out.String(), n)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			waitLines(1) // its first two samples are taken: every grant below comes after them

			ctx := context.Background()
			var (
				mu     sync.Mutex
				grants int
				wg     sync.WaitGroup
			)
			end := time.Now().Add(1500 * time.Millisecond)
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(end); i++ {
						key := fmt.Sprintf("req:%d:%d", g, i) // a new key each time
						if i%3 == 0 {
							key = fmt.Sprintf("cart:%d", i%4) // a few hot keys, contended
						}
						l, err := b.Acquire(ctx, key, 10*time.Second)
						if err != nil {
							continue // held by another goroutine: no grant
						}
						mu.Lock()
						grants++
						mu.Unlock()
						time.Sleep(time.Millisecond)
						if err := b.Release(ctx, l.ID); err != nil {
							t.Errorf("release: %v", err)
						}
					}
				}()
			}
			wg.Wait()
			n := len(lines(strings.TrimSpace(out.String())))
			waitLines(n + 2) // two samples after the last release
			stop()
			r := <-done
			if r.code != 0 || r.err != "" {
				t.Fatalf("watch: status %d, stderr %q", r.code, r.err)
			}
			var acquired, released int64
			for _, row := range watchRows(t, r.out) {
				acquired += row.Acquired
				released += row.Released
			}
			t.Logf("%d grants made; watch counted %d acquired, %d released", grants, acquired, released)
			if grants < 100 {
				t.Fatalf("only %d grants made in 1.5s", grants)
			}
			for what, n := range map[string]int64{"acquired": acquired, "released": released} {
				if d := float64(n-int64(grants)) / float64(grants); d < -0.05 || d > 0.05 {
					t.Errorf("watch counted %d %s, %+.1f%% off the %d grants made; want within 5%%", n, what, 100*d, grants)
				}
			}
		})
	}
}
