package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestDoctorSevere runs doctor on a server without persistence that evicts
// any key: both are severe, and the status says so.
func TestDoctorSevere(t *testing.T) {
	srv := redistest.Start(t) // --save "" --appendonly no
	rdb := srv.Client(t)
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	newBackend(t, rdb, redisbackend.Options{}) // records the configuration under the default prefix
	r := syncguard(t, "doctor", "--redis", urlOf(srv))
	if r.code != ExitSevere || r.err != "" {
		t.Errorf("doctor: status %d, stderr %q; want %d", r.code, r.err, ExitSevere)
	}
	for _, want := range []string{"severe persistence: no persistence", "severe eviction: maxmemory-policy allkeys-lru",
		"ok fences: no fence counters", "doctor: 2 severe"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, r.out)
		}
	}
}

// TestDoctorPasses runs doctor on a server with AOF always and
// noeviction, holding fence counters.
func TestDoctorPasses(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, kv := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}, {"maxmemory-policy", "noeviction"}} {
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Turning the AOF on rewrites it in the background; a server stopped
	// during that takes the full stop timeout (10 s) to go.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info := rdb.Info(ctx, "persistence").Val()
		if strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AOF rewrite did not end:\n%s", info)
		}
	}
	b := newBackend(t, rdb, redisbackend.Options{})
	for i := range 5 {
		if _, err := b.Acquire(ctx, fmt.Sprint("k", i), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	// A striped counter next to the per-key ones. Its backend records no
	// configuration: instances mixing per-key and striped counters on one
	// prefix are what the config finding reports as severe
	// (TestDoctorConfigMismatch).
	striped := newBackend(t, rdb, redisbackend.Options{FenceStripes: 4, DisableConfigRecord: true})
	if _, err := striped.Acquire(ctx, "s", time.Minute); err != nil {
		t.Fatal(err)
	}
	r := syncguard(t, "doctor", "--redis", urlOf(srv), "--json")
	if r.code != 0 || r.err != "" {
		t.Fatalf("doctor: status %d, stderr %q\n%s", r.code, r.err, r.out)
	}
	var got struct {
		Findings []struct{ Name, Severity, Message string }
		Worst    string
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatal(err)
	}
	sev := map[string]string{}
	for _, f := range got.Findings {
		sev[f.Name] = f.Severity
		if f.Name == CheckFences && !strings.HasPrefix(f.Message, "6 fence counters under syncguard:fence:* (5 per key, 1 striped), about ") {
			t.Errorf("fences finding %q, want 6 counters with their memory", f.Message)
		}
	}
	if sev["persistence"] != "ok" || sev["eviction"] != "ok" || sev[CheckFences] != "ok" || sev[admin.CheckConfig] != "ok" || got.Worst == "severe" {
		t.Errorf("doctor findings %v (worst %s), want persistence, eviction, config and fences ok", sev, got.Worst)
	}
}

func TestFenceFindingThresholds(t *testing.T) {
	for _, tc := range []struct {
		perKey, striped int64
		want            admin.Severity
	}{
		{0, 0, admin.SeverityOK},
		{99_999, 1024, admin.SeverityOK},
		{100_000, 0, admin.SeverityInfo},
		{1_000_000, 0, admin.SeverityWarning},
	} {
		f := fenceCount{perKey: tc.perKey, striped: tc.striped}.finding("p:fence:*")
		if f.Severity != tc.want || (tc.want != admin.SeverityOK) != (f.Advice != "") {
			t.Errorf("%d per key, %d striped: %s %q -> %q; want %s with advice when not ok", tc.perKey, tc.striped, f.Severity, f.Message, f.Advice, tc.want)
		}
	}
}

// TestNoConfigRecord: on a server that holds no configuration record under
// the prefix (not the application's server, or not its prefix), every
// command names the server it read in a warning, and doctor exits 1 even
// when nothing else is wrong.
func TestNoConfigRecord(t *testing.T) {
	srv := redistest.Start(t, redistest.WithAOF()) // nothing severe for doctor to find
	rdb := srv.Client(t)
	want := srv.Addr() + " holds no syncguard configuration record under the prefix (syncguard:config:backend)"
	for _, tc := range []struct {
		cmd  string
		code int
	}{{"ls", ExitOK}, {"doctor", ExitFailure}} {
		r := syncguard(t, tc.cmd, "--redis", urlOf(srv))
		if r.code != tc.code {
			t.Errorf("%s: status %d, want %d (stderr %q)", tc.cmd, r.code, tc.code, r.err)
		}
		if !strings.HasPrefix(r.err, "syncguard: warning: ") || !strings.Contains(r.err, want) {
			t.Errorf("%s: stderr %q, want a warning containing %q", tc.cmd, r.err, want)
		}
	}
	newBackend(t, rdb, redisbackend.Options{})
	if r := syncguard(t, "ls", "--redis", urlOf(srv)); r.code != ExitOK || r.err != "" {
		t.Errorf("ls with a record: status %d, stderr %q; want 0 and no warning", r.code, r.err)
	}
}

// TestDefaultServerNamed: without --redis and REDIS_URL the command says
// which server it read, also when that server holds the application's
// configuration record, and says nothing of it when --redis names one.
func TestDefaultServerNamed(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	env := Env{defaultURL: urlOf(srv)}
	want := "syncguard: note: reading " + srv.Addr() + " (the default: no --redis or REDIS_URL given)\n"
	for _, cmd := range []string{"ls", "doctor"} {
		if r := syncguardWith(t, env, cmd, "--prefix", p); r.err != want {
			t.Errorf("%s without --redis: status %d, stderr %q; want %q", cmd, r.code, r.err, want)
		}
	}
	if r := syncguardWith(t, env, "ls", "--prefix", p, "--redis", urlOf(srv)); r.code != ExitOK || r.err != "" {
		t.Errorf("ls --redis: status %d, stderr %q; want 0 and nothing on stderr", r.code, r.err)
	}
}
