package redisbackend_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/acltest"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// aclPrefix is a prefix of the test's own under the prefix the rules of
// docs/acl.md are written for.
func aclPrefix(t *testing.T) string {
	return acltest.Prefix + ":" + strings.TrimSuffix(redistest.Prefix(t), ":")
}

// aclBackends returns a locktest factory of backends on client, each under
// a prefix of its own below acltest.Prefix.
func aclBackends(client redis.UniversalClient) func(t *testing.T) lock.Backend {
	return func(t *testing.T) lock.Backend {
		b, err := redisbackend.New(client, &redisbackend.Options{Prefix: aclPrefix(t)})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
}

// TestACLAppConformance runs the lock and limit conformance suites as the
// application's user of docs/acl.md, created with exactly its line; no
// command, key or channel is refused to it, not even one whose error the
// backend swallows (ACL LOG).
func TestACLAppConformance(t *testing.T) {
	srv := redistest.Start(t)
	client := acltest.Client(t, srv, acltest.App)
	locktest.Run(t, aclBackends(client))
	locktest.RunLimit(t, aclBackends(client))
	acltest.NoDenials(t, srv, acltest.App)
}

// TestACLAppFeatures: as the application's user, the batched keep-alive
// keeps a lease, a waiter is handed the lock (hand-off, not polling), a done marker and a replay record are
// stored and read, and an election elects a leader and hands its term on.
func TestACLAppFeatures(t *testing.T) {
	srv := redistest.Start(t)
	opts := acltest.Create(t, srv, acltest.App)
	prefix := aclPrefix(t)
	holder := newACLBackend(t, redis.NewClient(opts), prefix, nil)
	wc := redis.NewClient(opts)
	counter := &redistest.Counter{}
	wc.AddHook(counter)
	waiter := newACLBackend(t, wc, prefix, nil)
	ctx := context.Background()

	// First, on a server that has loaded no script yet: the batched
	// keep-alive keeps a 1 s lease through 2 s (its NOSCRIPT path).
	held, _, release, err := lock.Hold(ctx, holder, "kept", lock.WithTTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if held.Err() != nil {
		t.Errorf("a 1s lease kept 2s: %v", context.Cause(held))
	}
	if err := release(); err != nil {
		t.Errorf("release: %v", err)
	}

	l, err := holder.Acquire(ctx, "hot", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		g, err := lock.Acquire(ctx, waiter, "hot", lock.WithWait(10*time.Second),
			lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}))
		if err == nil {
			err = waiter.Release(ctx, g.ID)
		}
		got <- err
	}()
	time.Sleep(400 * time.Millisecond) // the holder's work
	if err := holder.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	// The waiter's attempt, its hand-off's, and its release.
	if n := counter.Scripts.Load(); n > 3 {
		t.Errorf("the waiter ran %d scripts for one hand-off, want at most 3 (it polled)", n)
	}

	aclRecords(t, holder)
	aclElection(t, holder, waiter)
	acltest.NoDenials(t, srv, acltest.App)
}

// aclRecords stores and reads a done marker and a replay record on b.
func aclRecords(t *testing.T, b *redisbackend.Backend) {
	t.Helper()
	ctx := context.Background()
	l, err := b.Acquire(ctx, "job:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, l, time.Minute); err != nil {
		t.Fatal(err)
	}
	if done, err := b.IsDone(ctx, "job:1"); err != nil || !done {
		t.Fatalf("IsDone = %v, %v", done, err)
	}
	if l, err = b.Acquire(ctx, "req:1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l, []byte("response"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := b.Record(ctx, "req:1"); err != nil || !ok || string(rec) != "response" {
		t.Fatalf("Record = %q, %v, %v", rec, ok, err)
	}
}

// aclElection elects a on key, then b once a hands its term on.
func aclElection(t *testing.T, a, b *redisbackend.Backend) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var led atomic.Int32
	var wg sync.WaitGroup
	for _, be := range []*redisbackend.Backend{a, b} {
		wg.Go(func() {
			err := election.Lead(ctx, be, "leader", "node", func(ctx context.Context, term lock.Lease) error {
				led.Add(1)
				return nil // hand the term on
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Lead = %v, want context.Canceled", err)
			}
		})
	}
	for led.Load() < 4 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if led.Load() < 4 {
		t.Errorf("%d terms before the deadline, want 4 at least", led.Load())
	}
}

// newACLBackend returns a Backend on client under prefix, logging to log
// (nil: discarded), closed in t.Cleanup with client.
func newACLBackend(t *testing.T, client *redis.Client, prefix string, log *slog.Logger) *redisbackend.Backend {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix, Logger: log})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		_ = b.Close()
		_ = client.Close()
	})
	return b
}

// narrowed creates user on srv with the application's rule of
// docs/acl.md followed by more rules, and returns a client as user.
func narrowed(t *testing.T, srv *redistest.Server, user string, more ...string) *redis.Client {
	t.Helper()
	rule := acltest.Rule(t, acltest.App)
	args := []any{"acl", "setuser", user}
	for _, w := range append(rule, more...) {
		args = append(args, w)
	}
	if err := srv.Client(t).Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER %s: %v", user, err)
	}
	return redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: user, Password: acltest.Password(t, rule)})
}

// TestACLDenied: a rule too narrow fails with AuthFailed, not transient,
// and a message that says what Redis refused and where the rule is: a
// command a script calls, a key outside the pattern, EVALSHA itself (with
// EVAL allowed: nothing is written). A wrong password stays "rejected the
// credentials".
func TestACLDenied(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)
	for _, c := range []struct {
		name, prefix string
		client       *redis.Client
		want         string
	}{
		{"no TIME", acltest.Prefix + ":a", narrowed(t, srv, "no-time", "-time"),
			"does not allow a command the script calls"},
		{"key outside", "other", narrowed(t, srv, "outside"),
			"does not allow a key outside its key patterns (~)"},
		{"no EVALSHA", acltest.Prefix + ":b", narrowed(t, srv, "no-evalsha", "-evalsha"),
			"does not allow the command EVALSHA"},
	} {
		b := newACLBackend(t, c.client, c.prefix, nil)
		_, err := b.Acquire(ctx, "order:1", time.Minute)
		var le *lock.Error
		if !errors.As(err, &le) || le.Code != lock.CodeAuthFailed || le.Code.Transient() {
			t.Errorf("%s: Acquire = %v, want a non-transient AuthFailed", c.name, err)
			continue
		}
		if !strings.Contains(le.Msg, "permission denied") || !strings.Contains(le.Msg, c.want) ||
			!strings.Contains(le.Msg, "docs/acl.md") || strings.Contains(le.Msg, "credentials") {
			t.Errorf("%s: message %q, want permission denied, %q and docs/acl.md", c.name, le.Msg, c.want)
		}
		// Nothing written but the configuration record.
		keys, err := admin.Keys(ctx, c.prefix+":*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 1 || (len(keys) == 1 && !strings.HasSuffix(keys[0], ":config:backend")) {
			t.Errorf("%s: keys after the refused Acquire: %q, want the configuration record at most", c.name, keys)
		}
		// lock.Do does not retry it: one attempt.
		start := time.Now()
		if err := lock.Do(ctx, b, "order:2", func(context.Context, lock.Lease) error { return nil },
			lock.WithWait(5*time.Second)); lock.CodeOf(err) != lock.CodeAuthFailed {
			t.Errorf("%s: lock.Do = %v, want AuthFailed", c.name, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: lock.Do took %v to fail: it retried a permission error", c.name, d)
		}
	}

	wrong := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: "no-time", Password: "wrong"})
	b := newACLBackend(t, wrong, acltest.Prefix, nil)
	_, err := b.Acquire(ctx, "order:1", time.Minute)
	var le *lock.Error
	if !errors.As(err, &le) || le.Code != lock.CodeAuthFailed || le.Msg != "redis rejected the credentials" {
		t.Errorf("wrong password: Acquire = %v, want AuthFailed: redis rejected the credentials", err)
	}
}

// TestACLNoSubscribe: a user that may not SUBSCRIBE still waits, by
// polling, and the Backend warns once why.
func TestACLNoSubscribe(t *testing.T) {
	srv := redistest.Start(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	b := newACLBackend(t, narrowed(t, srv, "no-subscribe", "-subscribe"), aclPrefix(t), log)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var ran atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			err := lock.Do(ctx, b, "hot", func(context.Context, lock.Lease) error {
				ran.Add(1)
				time.Sleep(50 * time.Millisecond)
				return nil
			}, lock.WithWait(20*time.Second))
			if err != nil {
				t.Errorf("lock.Do: %v", err)
			}
		})
	}
	wg.Wait()
	if ran.Load() != 4 {
		t.Errorf("%d of 4 ran", ran.Load())
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if n := strings.Count(out, "may not subscribe"); n != 1 || !strings.Contains(out, "docs/acl.md") {
		t.Errorf("log:\n%s\nwant one warning that the user may not subscribe, naming docs/acl.md", out)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// scriptCommand finds the commands the scripts call: redis.call('GET',
// redis.pcall('GET', and the helper typed('GET' (lib.lua).
var scriptCommand = regexp.MustCompile(`(?:redis\.p?call|typed)\(\s*'([A-Za-z]+)'`)

// TestACLRulesGrantScriptCommands: the rules of the application, the
// worker and the operator who may force grant every command any script
// calls, by name (a script's path the suites do not reach included), and
// no rule grants a category, @admin or @dangerous.
func TestACLRulesGrantScriptCommands(t *testing.T) {
	files, err := filepath.Glob("scripts/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("scripts: %v, %v", files, err)
	}
	need := map[string]bool{"evalsha": true, "eval": true}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range scriptCommand.FindAllStringSubmatch(string(src), -1) {
			need[strings.ToLower(m[1])] = true
		}
	}
	if !need["time"] || !need["zremrangebyscore"] {
		t.Fatalf("found %v in the scripts, want TIME and ZREMRANGEBYSCORE among them", need)
	}
	for _, user := range []string{acltest.App, acltest.Worker, acltest.ForceOperator} {
		rule := acltest.Rule(t, user)
		for cmd := range need {
			if !slices.Contains(rule, "+"+cmd) {
				t.Errorf("the rule of %s does not grant %s, which a script calls", user, strings.ToUpper(cmd))
			}
		}
	}
	for _, user := range []string{acltest.App, acltest.Worker, acltest.Operator, acltest.ForceOperator} {
		rule := acltest.Rule(t, user)
		if !slices.Contains(rule, "-@all") {
			t.Errorf("the rule of %s does not start from -@all", user)
		}
		for _, w := range rule {
			if strings.HasPrefix(w, "+@") || w == "allkeys" || w == "allchannels" || w == "~*" || w == "&*" || w == "allcommands" {
				t.Errorf("the rule of %s grants %s; list the commands, keys and channels one by one", user, w)
			}
		}
	}
}
