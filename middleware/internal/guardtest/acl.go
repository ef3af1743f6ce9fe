package guardtest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/testkit/acltest"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// aclEnv is where RunACL's scenarios keep their backends: a server of the
// test's own, as the application's user of docs/acl.md.
type aclEnv struct {
	client func(t *testing.T) *redis.Client
	prefix func(t *testing.T) string
}

// aclScenarios are the scenarios RunACL runs: locks with and without a
// wait, heartbeats, lost leases, limits and replay.
var aclScenarios = []scenario{
	{"busy key without wait: one runs, 19 get 409", busyNoWait},
	{"busy key with wait: all run, one at a time", busyWait},
	{"heartbeat keeps a 1s lease through a 3s handler", heartbeat},
	{"lost lease cancels the handler's context", leaseLost},
	{"wait gives up with 409 after the wait", waitGivesUp},
	{"limit 3 with a wait: 30 requests all run, never more than 3 at once", limitWait},
	{"limit on a key held as a plain lock: 500, the handler does not run", limitKindMismatch},
	{"replay: 100 retries after a 201 run the handler once", replaySequential},
	{"replay: 20 concurrent with a wait run once, 19 replays", replayConcurrent},
	{"replay: an unreadable record is 500, never replayed or run", replayBadRecord},
}

// RunACL runs a representative part of the scenarios against a, over
// HTTP/1.1, with every backend on a Redis of the test's own as the
// application's user of docs/acl.md (testkit/acltest), created with
// exactly its line: no command, key or channel is refused to it (ACL
// LOG). Then, as a user whose rule is too narrow, a request is answered
// 500 (lock misconfigured) without running its handler.
func RunACL(t *testing.T, a Adapter) {
	srv := redistest.Start(t)
	opts := acltest.Create(t, srv, acltest.App)
	a.Build = func(t *testing.T, s Setup) http.Handler {
		t.Helper()
		h, err := a.New(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a.proto, a.raw = protocols[0], a.Build
	raw := a
	a.Build = func(t *testing.T, s Setup) http.Handler { return serveRemote(t, raw, a.proto, s) }
	a.acl = &aclEnv{
		client: func(t *testing.T) *redis.Client {
			c := redis.NewClient(opts)
			t.Cleanup(func() { _ = c.Close() })
			return c
		},
		prefix: func(t *testing.T) string {
			return acltest.Prefix + ":" + strings.TrimSuffix(redistest.Prefix(t), ":")
		},
	}
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range aclScenarios {
			t.Run(sc.desc, func(t *testing.T) {
				t.Parallel()
				sc.run(t, a)
			})
		}
	})
	acltest.NoDenials(t, srv, acltest.App)
	t.Run("rule too narrow: 500, the handler does not run", func(t *testing.T) { aclTooNarrow(t, a, srv) })
}

// aclTooNarrow sends a request through a middleware whose backend's user
// may not run TIME, which every lock script calls.
func aclTooNarrow(t *testing.T, a Adapter, srv *redistest.Server) {
	rule := acltest.Rule(t, acltest.App)
	args := []any{"acl", "setuser", "sg-no-time"}
	for _, w := range append(rule, "-time") {
		args = append(args, w)
	}
	if err := srv.Client(t).Do(context.Background(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	// One attempt is one EVALSHA: the scenarios before loaded the scripts.
	warm := newEnvPrefix(t, a.acl.client(t), a.acl.prefix(t))
	hold(t, warm, "warm", time.Minute)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: "sg-no-time", Password: acltest.Password(t, rule)})
	t.Cleanup(func() { _ = rdb.Close() })
	e := newEnvPrefix(t, rdb, a.acl.prefix(t))
	var runs atomic.Int32
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Wait: 5 * time.Second, Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
		runs.Add(1)
		ok(w)
	}})
	rec := serve(h, ptr(key))
	var p guard.Problem
	_ = json.Unmarshal(rec.Body.Bytes(), &p)
	if rec.Code != http.StatusInternalServerError || !strings.HasSuffix(p.Type, "lock-misconfigured") || runs.Load() != 0 {
		t.Errorf("status %d, problem %+v, %d runs; want 500, lock-misconfigured, the handler not run", rec.Code, p, runs.Load())
	}
	if n := e.cmds.Scripts.Load(); n != 1 {
		t.Errorf("%d scripts sent, want 1: a permission error is not retried", n)
	}
}
