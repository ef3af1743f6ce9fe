package redisbackend_test

import (
	"context"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

const (
	sevOK      = admin.SeverityOK
	sevInfo    = admin.SeverityInfo
	sevUnknown = admin.SeverityUnknown
	sevWarning = admin.SeverityWarning
	sevSevere  = admin.SeveritySevere
)

// checkNames is the order of the findings of one node.
var checkNames = []string{
	admin.CheckVersion, admin.CheckPersistence, admin.CheckEviction,
	admin.CheckReplication, admin.CheckCluster,
}

// TestCheck runs Check against private servers started with the settings
// of each case (every server of redistest starts with --save "" and
// --appendonly no unless the case overrides them) and asserts the
// severity of every finding and a phrase of the messages that matter.
func TestCheck(t *testing.T) {
	t.Parallel()
	// A lone redis-server as redistest starts it: 7.0, no persistence,
	// noeviction without a limit, no replicas, cluster mode off.
	base := map[string]admin.Severity{
		admin.CheckVersion:     sevOK,
		admin.CheckPersistence: sevSevere,
		admin.CheckEviction:    sevOK,
		admin.CheckReplication: sevInfo,
		admin.CheckCluster:     sevOK,
	}
	tests := []struct {
		desc   string
		server []redistest.Option
		client func(*redis.Options) // nil: the default user, go-redis defaults
		opts   *redisbackend.Options
		want   map[string]admin.Severity // overrides of base
		phrase map[string]string         // a part of the finding's message
		worst  admin.Severity
	}{
		{
			desc:   "no persistence: fences restart after a restart",
			phrase: map[string]string{admin.CheckPersistence: "fence counter starts again at 1"},
			worst:  sevSevere,
		},
		{
			desc:   "AOF with appendfsync always",
			server: []redistest.Option{redistest.WithAOF()},
			want:   map[string]admin.Severity{admin.CheckPersistence: sevOK},
			phrase: map[string]string{admin.CheckPersistence: "appendfsync always"},
			worst:  sevInfo,
		},
		{
			desc:   "AOF with appendfsync everysec: the last second",
			server: []redistest.Option{redistest.WithArgs("--appendonly", "yes", "--appendfsync", "everysec")},
			want:   map[string]admin.Severity{admin.CheckPersistence: sevWarning},
			phrase: map[string]string{admin.CheckPersistence: "last second"},
			worst:  sevWarning,
		},
		{
			desc:   "RDB snapshots only",
			server: []redistest.Option{redistest.WithArgs("--save", "3600 1")},
			want:   map[string]admin.Severity{admin.CheckPersistence: sevWarning},
			phrase: map[string]string{admin.CheckPersistence: `RDB snapshots only (save "3600 1")`},
			worst:  sevWarning,
		},
		{
			desc:   "allkeys-lru evicts fence counters",
			server: []redistest.Option{redistest.WithAOF(), redistest.WithArgs("--maxmemory-policy", "allkeys-lru")},
			want:   map[string]admin.Severity{admin.CheckPersistence: sevOK, admin.CheckEviction: sevSevere},
			phrase: map[string]string{admin.CheckEviction: "fence counters included"},
			worst:  sevSevere,
		},
		{
			desc:   "noeviction with a limit: acquires fail rather than lose fences",
			server: []redistest.Option{redistest.WithAOF(), redistest.WithArgs("--maxmemory", "64mb")},
			want:   map[string]admin.Severity{admin.CheckPersistence: sevOK},
			phrase: map[string]string{admin.CheckEviction: "maxmemory 64mb: when memory is full, writes fail with OOM"},
			worst:  sevInfo,
		},
		{
			desc:   "volatile-lru with a limit keeps fence counters, not locks",
			server: []redistest.Option{redistest.WithAOF(), redistest.WithArgs("--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru")},
			want:   map[string]admin.Severity{admin.CheckPersistence: sevOK, admin.CheckEviction: sevInfo},
			phrase: map[string]string{admin.CheckEviction: "fence counters (no TTL) stay"},
			worst:  sevInfo,
		},
		{
			desc: "CONFIG renamed away (managed Redis): persistence unknown, eviction from INFO memory",
			server: []redistest.Option{redistest.WithArgs("--rename-command", "CONFIG", "",
				"--maxmemory-policy", "allkeys-lfu")},
			want: map[string]admin.Severity{admin.CheckPersistence: sevUnknown, admin.CheckEviction: sevSevere},
			phrase: map[string]string{
				admin.CheckPersistence: "INFO persistence: AOF off",
				admin.CheckEviction:    "allkeys-lfu (from INFO memory)",
			},
			worst: sevSevere,
		},
		{
			desc: "an ACL user without CONFIG (NOPERM): persistence unknown",
			server: []redistest.Option{redistest.WithAOF(), redistest.WithArgs(
				"--user", "app", "on", ">app-pw", "~*", "&*", "+@all", "-config")},
			client: func(o *redis.Options) { o.Username, o.Password = "app", "app-pw" },
			want:   map[string]admin.Severity{admin.CheckPersistence: sevUnknown},
			phrase: map[string]string{
				admin.CheckPersistence: "INFO persistence: AOF on, fsync policy unknown",
				admin.CheckEviction:    "noeviction (from INFO memory)",
			},
			worst: sevUnknown,
		},
		{
			desc:   "CONFIG and INFO renamed away: every finding unknown",
			server: []redistest.Option{redistest.WithArgs("--rename-command", "CONFIG", "", "--rename-command", "INFO", "")},
			want: map[string]admin.Severity{
				admin.CheckVersion: sevUnknown, admin.CheckPersistence: sevUnknown,
				admin.CheckEviction: sevUnknown, admin.CheckReplication: sevUnknown,
				admin.CheckCluster: sevUnknown,
			},
			phrase: map[string]string{admin.CheckVersion: "does not answer INFO server"},
			worst:  sevUnknown,
		},
		{
			desc:   "ReplicaAck on a primary without replicas: every Acquire fails",
			server: []redistest.Option{redistest.WithAOF()},
			opts:   &redisbackend.Options{ReplicaAck: redisbackend.ReplicaAck{N: 1, Timeout: 100 * time.Millisecond}},
			want:   map[string]admin.Severity{admin.CheckPersistence: sevOK, admin.CheckReplication: sevWarning},
			phrase: map[string]string{admin.CheckReplication: "waits for 1 replica but the primary has 0"},
			worst:  sevWarning,
		},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			var opts []func(*redis.Options)
			if tc.client != nil {
				opts = append(opts, tc.client)
			}
			client := redistest.Start(t, tc.server...).Client(t, opts...)
			b, err := redisbackend.New(client, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			r, err := admin.Check(context.Background(), b)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			t.Logf("report:\n%s", r)
			want := maps.Clone(base)
			maps.Copy(want, tc.want)
			assertNode(t, r.Findings, "", want, tc.phrase)
			if got := r.Worst(); got != tc.worst {
				t.Errorf("Worst() = %v, want %v", got, tc.worst)
			}
		})
	}
}

// assertNode asserts that fs are the five findings of node, in order, with
// the wanted severities, messages containing phrase, and advice on every
// finding that is not ok.
func assertNode(t *testing.T, fs []admin.Finding, node string, want map[string]admin.Severity, phrase map[string]string) {
	t.Helper()
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, checkNames) {
		t.Fatalf("finding names %v, want %v", names, checkNames)
	}
	for _, f := range fs {
		if f.Node != node {
			t.Errorf("%s: Node = %q, want %q", f.Name, f.Node, node)
		}
		if f.Severity != want[f.Name] {
			t.Errorf("%s: severity %v, want %v (%s)", f.Name, f.Severity, want[f.Name], f)
		}
		if p := phrase[f.Name]; !strings.Contains(f.Message, p) {
			t.Errorf("%s: message %q lacks %q", f.Name, f.Message, p)
		}
		if f.Message == "" || strings.Contains(f.Message, "\n") {
			t.Errorf("%s: message %q is not one line", f.Name, f.Message)
		}
		if f.Severity != sevOK && f.Advice == "" {
			t.Errorf("%s: severity %v without advice", f.Name, f.Severity)
		}
	}
}

// TestCheckErrors: only a server Check cannot use at all is an error,
// mapped like the other methods' errors; go-redis default options.
func TestCheckErrors(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		desc   string
		client func(t *testing.T) *redis.Client
		ctx    context.Context
		want   lock.Code
	}{
		{
			desc: "nothing listens at the address",
			client: func(t *testing.T) *redis.Client {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := ln.Addr().String()
				ln.Close()
				c := redis.NewClient(&redis.Options{Addr: addr})
				t.Cleanup(func() { c.Close() })
				return c
			},
			want: lock.CodeServiceUnavailable,
		},
		{
			desc: "no password for a server that needs one (NOAUTH)",
			client: func(t *testing.T) *redis.Client {
				return redistest.Start(t, redistest.WithPassword("s3cret")).Client(t, func(o *redis.Options) { o.Password = "" })
			},
			want: lock.CodeAuthFailed,
		},
		{
			desc:   "context cancelled",
			client: func(t *testing.T) *redis.Client { return redistest.Shared(t).Client(t) },
			ctx:    cancelled,
			want:   lock.CodeAborted,
		},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			b, err := redisbackend.New(tc.client(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			r, err := admin.Check(ctx, b)
			if got := lock.CodeOf(err); got != tc.want {
				t.Fatalf("Check: err %v (code %q), want code %q", err, got, tc.want)
			}
			if len(r.Findings) != 0 {
				t.Errorf("Check failed but returned findings:\n%s", r)
			}
		})
	}
}

// TestCheckCluster checks every master of the shared cluster (3 masters,
// one replica each, no persistence): five findings per master, tagged with
// its address, and the replicas judged against ReplicaAck.
func TestCheckCluster(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster(t)
	client := c.Client(t)
	masters := c.Masters(t)
	slices.Sort(masters)
	tests := []struct {
		desc        string
		ack         redisbackend.ReplicaAck
		replication admin.Severity
		phrase      string
	}{
		{desc: "ReplicaAck off", replication: sevWarning, phrase: "1 replica and Options.ReplicaAck off"},
		{desc: "ReplicaAck on every replica", ack: redisbackend.ReplicaAck{N: 1, Timeout: time.Second},
			replication: sevOK, phrase: "waits for all of them"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), ReplicaAck: tc.ack})
			if err != nil {
				t.Fatal(err)
			}
			r, err := admin.Check(context.Background(), b)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			t.Logf("report:\n%s", r)
			if len(r.Findings) != len(masters)*len(checkNames) {
				t.Fatalf("%d findings, want %d (5 for each of %v)", len(r.Findings), len(masters)*len(checkNames), masters)
			}
			want := map[string]admin.Severity{
				admin.CheckVersion:     sevOK,
				admin.CheckPersistence: sevSevere,
				admin.CheckEviction:    sevOK,
				admin.CheckReplication: tc.replication,
				admin.CheckCluster:     sevOK,
			}
			phrase := map[string]string{
				admin.CheckReplication: tc.phrase,
				admin.CheckCluster:     "keys with a hash tag of their own ({acct}:1) in their tag's slot",
			}
			for i, m := range masters {
				assertNode(t, r.Findings[i*len(checkNames):(i+1)*len(checkNames)], m, want, phrase)
			}
		})
	}
}

// TestCheckClusterMasterDown: a master that does not answer gets unknown
// findings naming it; the other masters are still checked.
func TestCheckClusterMasterDown(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	client := c.Client(t)
	b, err := redisbackend.New(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := admin.Check(ctx, b); err != nil { // the client learns the slots
		t.Fatalf("Check: %v", err)
	}
	masters := c.Masters(t)
	slices.Sort(masters)
	down := masters[0]
	c.StopNode(t, down)
	r, err := admin.Check(ctx, b)
	if err != nil {
		t.Fatalf("Check with %s down: %v", down, err)
	}
	t.Logf("report:\n%s", r)
	byNode := map[string][]admin.Finding{}
	for _, f := range r.Findings {
		byNode[f.Node] = append(byNode[f.Node], f)
	}
	for _, m := range masters {
		fs := byNode[m]
		if len(fs) != len(checkNames) {
			t.Errorf("%s: %d findings, want %d", m, len(fs), len(checkNames))
			continue
		}
		for _, f := range fs {
			if m == down && (f.Severity != sevUnknown || !strings.Contains(f.Message, "does not answer")) {
				t.Errorf("stopped master: %s, want unknown and \"does not answer\"", f)
			}
			if m != down && f.Severity == sevUnknown {
				t.Errorf("live master: %s", f)
			}
		}
	}
}

// TestCheckSentinel checks through a failover client: the findings are
// those of the primary it talks to (one replica).
func TestCheckSentinel(t *testing.T) {
	t.Parallel()
	client := redistest.StartSentinel(t).Client(t)
	for _, tc := range []struct {
		desc string
		ack  redisbackend.ReplicaAck
		want admin.Severity
	}{
		{desc: "ReplicaAck off", want: sevWarning},
		{desc: "ReplicaAck N=1", ack: redisbackend.ReplicaAck{N: 1, Timeout: time.Second}, want: sevOK},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			b, err := redisbackend.New(client, &redisbackend.Options{ReplicaAck: tc.ack})
			if err != nil {
				t.Fatal(err)
			}
			r, err := admin.Check(context.Background(), b)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			t.Logf("report:\n%s", r)
			assertNode(t, r.Findings, "", map[string]admin.Severity{
				admin.CheckVersion:     sevOK,
				admin.CheckPersistence: sevSevere,
				admin.CheckEviction:    sevOK,
				admin.CheckReplication: tc.want,
				admin.CheckCluster:     sevOK,
			}, map[string]string{admin.CheckReplication: "primary with 1 replica"})
		})
	}
}

// TestCheckHiddenClient: a wrapper that hides the concrete client (it
// embeds the redis.UniversalClient interface) is checked as the one server
// it talks to, with the findings the client itself gets.
func TestCheckHiddenClient(t *testing.T) {
	t.Parallel()
	rdb := redistest.Shared(t).Client(t)
	type hidden struct{ redis.UniversalClient }
	check := func(c redis.UniversalClient) admin.Report {
		t.Helper()
		b, err := redisbackend.New(c, &redisbackend.Options{DisableConfigRecord: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := admin.Check(context.Background(), b)
		if err != nil {
			t.Fatalf("Check(%T): %v", c, err)
		}
		return r
	}
	got, want := check(hidden{rdb}), check(rdb)
	if !slices.Equal(got.Findings, want.Findings) {
		t.Errorf("Check of the wrapper:\n%s\nwant the client's:\n%s", got, want)
	}
}

func TestSeverityString(t *testing.T) {
	for _, tc := range []struct {
		desc string
		s    admin.Severity
		want string
	}{
		{desc: "ok", s: sevOK, want: "ok"},
		{desc: "info", s: sevInfo, want: "info"},
		{desc: "unknown", s: sevUnknown, want: "unknown"},
		{desc: "warning", s: sevWarning, want: "warning"},
		{desc: "severe", s: sevSevere, want: "severe"},
		{desc: "out of range", s: 9, want: "Severity(9)"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%s: String() = %q, want %q", tc.desc, got, tc.want)
		}
	}
}
