// Package acltest runs tests as the Redis ACL users that docs/acl.md
// documents: it reads each role's ACL SETUSER line from the page and
// creates the user with exactly that line, so the page cannot drift from
// what the code needs. It is imported by tests only.
package acltest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The users of docs/acl.md, one per role.
const (
	// App takes locks: waiting, limits, replay records, elections.
	App = "sg-app"
	// Worker is an asynq worker with asynqlock and its Scheduler.
	Worker = "sg-worker"
	// Operator runs syncguard ls, show, watch and doctor, and writes nothing.
	Operator = "sg-ops"
	// ForceOperator also runs syncguard release --force.
	ForceOperator = "sg-ops-force"
)

// Prefix is the key prefix the rules of docs/acl.md are written for.
const Prefix = "sg"

// Doc is the page that gives the rules, from the module's root.
const Doc = "docs/acl.md"

// Rule returns the ACL SETUSER line docs/acl.md gives for user, split
// into its words, without "ACL SETUSER" and the user's name: the rules,
// as ACL SETUSER takes them.
func Rule(t testing.TB, user string) []string {
	t.Helper()
	path := filepath.Join(repoRoot(t), Doc)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("acltest: %v", err)
	}
	defer f.Close()
	var found []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		words := strings.Fields(sc.Text())
		if len(words) > 3 && words[0] == "ACL" && words[1] == "SETUSER" && words[2] == user {
			if found != nil {
				t.Fatalf("acltest: %s gives two ACL SETUSER lines for %s", Doc, user)
			}
			found = words[3:]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("acltest: reading %s: %v", path, err)
	}
	if found == nil {
		t.Fatalf("acltest: %s gives no ACL SETUSER line for %s", Doc, user)
	}
	return found
}

// Password returns the password a rule sets (its ">password" word).
func Password(t testing.TB, rule []string) string {
	t.Helper()
	for _, w := range rule {
		if pw, ok := strings.CutPrefix(w, ">"); ok {
			return pw
		}
	}
	t.Fatalf("acltest: the rule %q sets no password", rule)
	return ""
}

// Create creates user on srv with exactly its line of docs/acl.md (as the
// default user) and returns the options of a client logged in as user:
// go-redis's defaults otherwise. The server must be the test's own
// (redistest.Start): users and the ACL log are the server's.
func Create(t testing.TB, srv *redistest.Server, user string) *redis.Options {
	t.Helper()
	rule := Rule(t, user)
	admin := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := []any{"acl", "setuser", user}
	for _, w := range rule {
		args = append(args, w)
	}
	if err := admin.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("acltest: ACL SETUSER %s from %s: %v", user, Doc, err)
	}
	return &redis.Options{Addr: srv.Addr(), Username: user, Password: Password(t, rule)}
}

// Client creates user (Create) and returns a client logged in as user,
// closed in t.Cleanup.
func Client(t testing.TB, srv *redistest.Server, user string) *redis.Client {
	t.Helper()
	c := redis.NewClient(Create(t, srv, user))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// handshake are the commands go-redis sends when it connects and whose
// refusal it ignores (CLIENT SETINFO, Redis 7.2 and later; maintenance
// notifications): docs/acl.md leaves them out on purpose.
var handshake = map[string]bool{"client|setinfo": true, "client|maint_notifications": true}

// Denial is one entry of the server's ACL LOG.
type Denial struct {
	User, Reason, Object, Context string
	Count                         int64
}

func (d Denial) String() string {
	return fmt.Sprintf("%s was refused the %s %q (%s, %d times)", d.User, d.Reason, d.Object, d.Context, d.Count)
}

// Denials returns the entries of srv's ACL LOG for user, but for the
// handshake commands go-redis sends and ignores the refusal of.
func Denials(t testing.TB, srv *redistest.Server, user string) []Denial {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	entries, err := srv.Client(t).ACLLog(ctx, 1000).Result()
	if err != nil {
		t.Fatalf("acltest: ACL LOG: %v", err)
	}
	var out []Denial
	for _, e := range entries {
		if e.Username != user || (e.Reason == "command" && handshake[e.Object]) {
			continue
		}
		out = append(out, Denial{User: e.Username, Reason: e.Reason, Object: e.Object, Context: e.Context, Count: e.Count})
	}
	return out
}

// NoDenials fails t for every entry of srv's ACL LOG for user: a command,
// key or channel the user needed and its rule does not grant, even one
// whose error the code swallowed. expected are the commands (as ACL LOG
// names them: "info", "config|get") that the rule refuses on purpose and
// the code does without.
func NoDenials(t testing.TB, srv *redistest.Server, user string, expected ...string) {
	t.Helper()
	for _, d := range Denials(t, srv, user) {
		if d.Reason == "command" && slices.Contains(expected, d.Object) {
			continue
		}
		t.Errorf("acltest: %v: the rule of %s in %s does not grant what the code needs", d, user, Doc)
	}
}

// ResetLog empties srv's ACL LOG.
func ResetLog(t testing.TB, srv *redistest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Client(t).ACLLogReset(ctx).Err(); err != nil {
		t.Fatalf("acltest: ACL LOG RESET: %v", err)
	}
}

// repoRoot is the nearest directory above the working directory (a test's
// package directory) that holds docs/acl.md: the repository's root, also
// for a test in one of its nested modules.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("acltest: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, Doc)); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(errors.New("acltest: no " + Doc + " above the test's directory"))
		}
		dir = parent
	}
}
