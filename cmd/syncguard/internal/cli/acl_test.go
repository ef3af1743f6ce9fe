package cli

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/acltest"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// aclServer starts a server of the test's own on which the application's
// user of docs/acl.md holds the lock order:1, a slot of the limit pool:1
// and stores a replay record for req:1, under acltest.Prefix. It returns
// the server and the application's Backend.
func aclServer(t *testing.T) (*redistest.Server, *redisbackend.Backend) {
	t.Helper()
	srv := redistest.Start(t)
	app := newBackend(t, acltest.Client(t, srv, acltest.App), redisbackend.Options{Prefix: acltest.Prefix})
	ctx := context.Background()
	if _, err := app.Acquire(ctx, "order:1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Acquire(ctx, app, "pool:1", lock.WithLimit(2), lock.WithTTL(time.Minute)); err != nil {
		t.Fatal(err)
	}
	l, err := app.Acquire(ctx, "req:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.ReleaseRecord(ctx, l, []byte("response"), time.Minute); err != nil {
		t.Fatal(err)
	}
	return srv, app
}

// aclURL is the --redis URL of user on srv, with its password of
// docs/acl.md.
func aclURL(t *testing.T, srv *redistest.Server, user string) string {
	t.Helper()
	o := acltest.Create(t, srv, user)
	return (&url.URL{Scheme: "redis", User: url.UserPassword(o.Username, o.Password), Host: o.Addr}).String()
}

// refusedOnPurpose are the commands the operators' rules of docs/acl.md
// leave out (@dangerous, @admin): the command does without them (doctor
// reports what it cannot read as unknown).
var refusedOnPurpose = []string{"info", "config|get"}

// readCommands are the operator's commands that write nothing, each
// with what its output must show.
var readCommands = []struct {
	args []string
	want string
}{
	{[]string{"ls"}, "order:1"},
	{[]string{"ls"}, "pool:1"},
	{[]string{"show", "order:1"}, "order:1"},
	{[]string{"show", "pool:1"}, "pool:1"},
	{[]string{"show", "req:1"}, "req:1"},
	{[]string{"watch", "--count", "2", "--interval", "100ms"}, "locks 1"},
	{[]string{"doctor"}, "fence"},
}

// runReads runs every read command as the user of url on acltest.Prefix:
// each succeeds and shows what it must, and none says it was refused.
func runReads(t *testing.T, url string) {
	t.Helper()
	for _, c := range readCommands {
		args := append([]string{"--redis", url, "--prefix", acltest.Prefix}, c.args...)
		r := syncguard(t, args...)
		if (r.code != ExitOK && !(c.args[0] == "doctor" && r.code == ExitSevere)) ||
			!strings.Contains(r.out, c.want) || strings.Contains(r.err, "refused") || strings.Contains(r.err, "permission") {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %q", c.args, r.code, r.out, r.err, c.want)
		}
	}
}

// TestACLReadOnlyOperator runs every command that reads as the read-only
// operator of docs/acl.md, created with exactly its line; then release
// --force and a write of its own both fail, and the lock is still held.
func TestACLReadOnlyOperator(t *testing.T) {
	srv, app := aclServer(t)
	url := aclURL(t, srv, acltest.Operator)
	runReads(t, url)
	acltest.NoDenials(t, srv, acltest.Operator, refusedOnPurpose...)

	r := syncguard(t, "--redis", url, "--prefix", acltest.Prefix, "release", "--force", "--yes", "order:1")
	if r.code != ExitFailure || !strings.Contains(r.err, "permission denied") || !strings.Contains(r.err, "docs/acl.md") {
		t.Errorf("release --force as the read-only operator: status %d, stdout %q, stderr %q; want a permission error", r.code, r.out, r.err)
	}
	ctx := context.Background()
	if locked, err := app.IsLocked(ctx, "order:1"); err != nil || !locked {
		t.Errorf("after the refused release, IsLocked = %v, %v; want the lock held", locked, err)
	}
	ops := redis.NewClient(acltest.Create(t, srv, acltest.Operator))
	defer ops.Close()
	for _, cmd := range [][]any{
		{"set", acltest.Prefix + ":order:1", "x"},
		{"del", acltest.Prefix + ":order:1"},
		{"hset", acltest.Prefix + ":config:backend", "x", "1"},
		{"publish", acltest.Prefix + ":waiter:x", "x"},
		{"get", "other:1"},
	} {
		if err := ops.Do(ctx, cmd...).Err(); !redis.IsPermissionError(err) {
			t.Errorf("%v as the read-only operator: %v, want NOPERM", cmd, err)
		}
	}
}

// TestACLForceOperator runs every command as the operator who may force,
// release --force included, with exactly its line of docs/acl.md.
func TestACLForceOperator(t *testing.T) {
	srv, app := aclServer(t)
	url := aclURL(t, srv, acltest.ForceOperator)
	runReads(t, url)
	r := syncguard(t, "--redis", url, "release", "--prefix", acltest.Prefix, "--force", "--yes", "order:1")
	if r.code != ExitOK {
		t.Errorf("release --force: status %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if locked, err := app.IsLocked(context.Background(), "order:1"); err != nil || locked {
		t.Errorf("after release --force, IsLocked = %v, %v; want it free", locked, err)
	}
	// A read-write lock's readers, held by the application.
	holdRW(t, app, "doc:1", rwlock.ModeRead)
	holdRW(t, app, "doc:1", rwlock.ModeRead)
	r = syncguard(t, "--redis", url, "release", "--prefix", acltest.Prefix, "--force", "--yes", "--all", "doc:1")
	if r.code != ExitOK || !strings.Contains(r.out, "released 2 readers of doc:1") {
		t.Errorf("release --force --all of readers: status %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if info, err := app.LookupRW(context.Background(), "doc:1"); err != nil || info != nil {
		t.Errorf("after release --force --all, LookupRW = %+v, %v; want it free", info, err)
	}
	acltest.NoDenials(t, srv, acltest.ForceOperator, refusedOnPurpose...)
}

// TestACLWrongPrefix: as the read-only operator, a prefix outside its
// rule's keys is a permission error naming the rule, not a key "holding
// a ," (an error read as an empty type); ls says it cannot read the
// configuration record.
func TestACLWrongPrefix(t *testing.T) {
	srv, _ := aclServer(t)
	url := aclURL(t, srv, acltest.Operator)
	r := syncguard(t, "--redis", url, "show", "order:1")
	if r.code != ExitFailure || !strings.Contains(r.err, "permission denied") || !strings.Contains(r.err, "NOPERM") ||
		strings.Contains(r.err, "holds a") {
		t.Errorf("show under the default prefix: status %d, stdout %q, stderr %q; want the permission error", r.code, r.out, r.err)
	}
	r = syncguard(t, "--redis", url, "ls")
	if !strings.Contains(r.err, "cannot read the configuration") || !strings.Contains(r.err, "permission denied") ||
		strings.Contains(r.err, "holds no syncguard configuration record") {
		t.Errorf("ls under the default prefix: status %d, stdout %q, stderr %q; want a note that the record cannot be read", r.code, r.out, r.err)
	}
	// Locks the user may list (SCAN) but not read: an error, not "0 locks".
	other := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: "other"})
	if _, err := other.Acquire(context.Background(), "order:1", time.Minute); err != nil {
		t.Fatal(err)
	}
	r = syncguard(t, "--redis", url, "--prefix", "other", "ls")
	if r.code != ExitFailure || !strings.Contains(r.err, "permission denied") || strings.Contains(r.out, "0 locks") {
		t.Errorf("ls --prefix other: status %d, stdout %q, stderr %q; want the permission error", r.code, r.out, r.err)
	}
}

// TestACLNoConfigRecord: an operator that may not read the configuration
// record is told so, and the flags name the keys.
func TestACLNoConfigRecord(t *testing.T) {
	srv, _ := aclServer(t)
	rule := append(acltest.Rule(t, acltest.Operator), "-hgetall")
	args := []any{"acl", "setuser", "no-record"}
	for _, w := range rule {
		args = append(args, w)
	}
	if err := srv.Client(t).Do(context.Background(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	url := (&url.URL{Scheme: "redis", User: url.UserPassword("no-record", acltest.Password(t, rule)), Host: srv.Addr()}).String()
	r := syncguard(t, "--redis", url, "--prefix", acltest.Prefix, "--layout", "single", "ls")
	if r.code != ExitOK || !strings.Contains(r.out, "order:1") || !strings.Contains(r.err, "cannot read the configuration") {
		t.Errorf("ls: status %d, stdout %q, stderr %q; want order:1 and a note that the record cannot be read", r.code, r.out, r.err)
	}
}
