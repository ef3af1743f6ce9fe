package redisbackend_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func newConfigBackend(t *testing.T, c redis.UniversalClient, o redisbackend.Options) *redisbackend.Backend {
	t.Helper()
	b, err := redisbackend.New(c, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestConfigRecord: New records its layout and stripes under the prefix
// in one hash, a field per configuration; RecordedConfigs reads them
// newest first, and CheckRecordedConfig (and Check) report the instances
// that disagree, graded by what the difference costs.
func TestConfigRecord(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	p := strings.TrimSuffix(redistest.Prefix(t), ":")
	key, err := redisbackend.ConfigKey(p + ":")
	if err != nil || key != p+":config:backend" {
		t.Fatalf("ConfigKey = %q, %v; want %q", key, err, p+":config:backend")
	}
	recs, err := admin.RecordedConfigs(ctx, rdb, p)
	if err != nil || len(recs) != 0 {
		t.Fatalf("before any New: %v, %v; want no record", recs, err)
	}

	start := time.Now()
	a := newConfigBackend(t, rdb, redisbackend.Options{Prefix: p})
	_ = newConfigBackend(t, rdb, redisbackend.Options{Prefix: p}) // a second instance, same configuration
	recs, err = admin.RecordedConfigs(ctx, rdb, a.Prefix())
	if err != nil || len(recs) != 1 || recs[0].Config != (redisbackend.Config{Layout: redisbackend.LayoutSingle}) ||
		recs[0].RecordedAt.Before(start.Add(-time.Second)) || recs[0].RecordedAt.After(time.Now().Add(time.Second)) {
		t.Fatalf("RecordedConfigs = %+v, %v; want one record of layout=single fenceStripes=0, now", recs, err)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl != -1 {
		t.Errorf("the record's PTTL is %v, want none (-1)", ttl)
	}
	f, err := admin.CheckRecordedConfig(ctx, a)
	if err != nil || f.Severity != admin.SeverityOK || f.Name != admin.CheckConfig {
		t.Fatalf("CheckRecordedConfig with one configuration = %v, %v; want ok", f, err)
	}
	r, err := admin.Check(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Name == admin.CheckConfig {
			t.Errorf("Check reported %v while every instance agrees", f)
		}
	}

	time.Sleep(5 * time.Millisecond) // a later record
	striped := newConfigBackend(t, rdb, redisbackend.Options{Prefix: p, FenceStripes: 64})
	recs, err = admin.RecordedConfigs(ctx, rdb, p)
	if err != nil || len(recs) != 2 || recs[0].Config != (redisbackend.Config{Layout: redisbackend.LayoutSingle, FenceStripes: 64}) ||
		recs[1].Config != (redisbackend.Config{Layout: redisbackend.LayoutSingle}) {
		t.Fatalf("RecordedConfigs = %+v, %v; want the striped configuration first, then the per-key one", recs, err)
	}
	if n := rdb.HLen(ctx, key).Val(); n != 2 {
		t.Errorf("the record has %d fields, want one per configuration (2)", n)
	}
	for _, b := range []*redisbackend.Backend{a, striped} {
		f, err := admin.CheckRecordedConfig(ctx, b)
		if err != nil || f.Severity != admin.SeveritySevere || !strings.Contains(f.Message, "can go back") ||
			!strings.Contains(f.Advice, "HDEL") {
			t.Errorf("CheckRecordedConfig of %v next to the other = %v, %v; want severe: fences can go back, with the HDEL advice", b.Config(), f, err)
		}
		r, err := admin.Check(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		last := r.Findings[len(r.Findings)-1]
		if last.Name != admin.CheckConfig || last.Severity != admin.SeveritySevere || last.Node != "" {
			t.Errorf("Check's last finding is %v, want the severe config finding", last)
		}
	}

	// Another stripe count in the single layout: a warning; the cluster
	// layout next to the single one: severe (two holders).
	other := newConfigBackend(t, rdb, redisbackend.Options{Prefix: p, FenceStripes: 128, DisableConfigRecord: true})
	if err := rdb.HDel(ctx, key, "layout=single fenceStripes=0").Err(); err != nil {
		t.Fatal(err)
	}
	if f, err := admin.CheckRecordedConfig(ctx, other); err != nil || f.Severity != admin.SeverityWarning {
		t.Errorf("CheckRecordedConfig of 128 stripes next to 64 = %v, %v; want a warning", f, err)
	}
	cl := newConfigBackend(t, rdb, redisbackend.Options{Prefix: p, Layout: redisbackend.LayoutCluster, FenceStripes: 64, DisableConfigRecord: true})
	if f, err := admin.CheckRecordedConfig(ctx, cl); err != nil || f.Severity != admin.SeveritySevere || !strings.Contains(f.Message, "held by two instances") {
		t.Errorf("CheckRecordedConfig of the cluster layout next to the single one = %v, %v; want severe", f, err)
	}
	if n := rdb.HLen(ctx, key).Val(); n != 1 {
		t.Errorf("DisableConfigRecord: the record has %d fields, want 1", n)
	}

	// A Config reads as JSON with the layout's name.
	js, _ := json.Marshal(recs[0])
	if !strings.Contains(string(js), `"layout":"single","fenceStripes":64`) {
		t.Errorf("JSON of a record: %s", js)
	}
}

// TestConfigRecordDisabledNoIO: with DisableConfigRecord New does no I/O
// at all; without, it sends one command, not a script.
func TestConfigRecordDisabledNoIO(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	counter := redistest.Count(rdb)
	p := redistest.Prefix(t)
	newConfigBackend(t, rdb, redisbackend.Options{Prefix: p, DisableConfigRecord: true})
	if d, c := counter.Dials.Load(), counter.Commands.Load(); d != 0 || c != 0 {
		t.Errorf("New with DisableConfigRecord: %d dials, %d commands; want none", d, c)
	}
	newConfigBackend(t, rdb, redisbackend.Options{Prefix: p})
	if d, s := counter.Dials.Load(), counter.Scripts.Load(); d != 1 || s != 0 {
		t.Errorf("New: %d dials, %d scripts; want one connection and no script (an HSET)", d, s)
	}
	if n := rdb.HLen(context.Background(), p+"config:backend").Val(); n != 1 {
		t.Errorf("after New the record has %d fields, want 1", n)
	}
}

// TestConfigRecordBounded: New neither fails nor waits long on a server
// that refuses connections or never answers.
func TestConfigRecordBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	for _, addr := range []string{ln.Addr().String(), "127.0.0.1:1"} {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = rdb.Close() })
		start := time.Now()
		b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "cfgbound"})
		if d := time.Since(start); err != nil || d > time.Second {
			t.Errorf("New on %s: %v after %v; want a Backend within about 200ms", addr, err, d)
		}
		if b != nil {
			_ = b.Close()
		}
	}
}

// TestConfigNotARecord: something else at the record's key (a lock an
// older version let a user take) is an error of RecordedConfigs and a
// warning of CheckRecordedConfig, and New still works.
func TestConfigNotARecord(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	p := strings.TrimSuffix(redistest.Prefix(t), ":")
	rdb.Set(ctx, p+":config:backend", `{"lockId":"x"}`, time.Minute)
	b := newConfigBackend(t, rdb, redisbackend.Options{Prefix: p})
	if _, err := admin.RecordedConfigs(ctx, rdb, p); lock.CodeOf(err) != lock.CodeInternal {
		t.Errorf("RecordedConfigs on a string = %v, want Internal", err)
	}
	if f, err := admin.CheckRecordedConfig(ctx, b); err != nil || f.Severity != admin.SeverityWarning {
		t.Errorf("CheckRecordedConfig on a string = %v, %v; want a warning", f, err)
	}
	if _, err := b.Acquire(ctx, "k", time.Second); err != nil {
		t.Errorf("Acquire: %v", err)
	}
}

// TestConfigKeyReserved: no lock can take the record's name. The user key
// "config:backend" and prefixes with a segment "config" are rejected
// before any I/O, other "config:" keys are locks as before, and no other
// key of either layout is named as the record.
func TestConfigKeyReserved(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	counter := redistest.Count(rdb)
	ctx := context.Background()
	p := strings.TrimSuffix(redistest.Prefix(t), ":")
	for _, bad := range []string{"config", "a:config", "config:b", "a:config:b"} {
		if _, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: bad}); lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("New(prefix %q) = %v, want InvalidArgument", bad, err)
		}
		if _, err := redisbackend.ConfigKey(bad); lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("ConfigKey(%q) = %v, want InvalidArgument", bad, err)
		}
	}
	for _, layout := range []redisbackend.Layout{redisbackend.LayoutSingle, redisbackend.LayoutCluster} {
		b := newConfigBackend(t, rdb, redisbackend.Options{Prefix: p, Layout: layout, DisableConfigRecord: true})
		dials, cmds := counter.Dials.Load(), counter.Commands.Load()
		for _, key := range []string{"config:backend"} {
			if _, err := b.Acquire(ctx, key, time.Second); lock.CodeOf(err) != lock.CodeInvalidArgument ||
				!strings.Contains(err.Error(), `"config:backend"`) {
				t.Errorf("%v: Acquire(%q) = %v, want InvalidArgument naming \"config:backend\"", layout, key, err)
			}
			if _, err := admin.StorageKeys(b, key); lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Errorf("%v: StorageKeys(%q) = %v, want InvalidArgument", layout, key, err)
			}
		}
		if d, c := counter.Dials.Load()-dials, counter.Commands.Load()-cmds; d != 0 || c != 0 {
			t.Errorf("%v: %d dials, %d commands for reserved keys; want none", layout, d, c)
		}
		// Keys next to the reserved word are locks as before, and none
		// of their keys is the record.
		record, _ := redisbackend.ConfigKey(p)
		for _, key := range []string{"config", "config:", "config:x", "config:reload", "configs:backend", "backend", ":config:backend", "x:config:backend"} {
			k, err := admin.StorageKeys(b, key)
			if err != nil {
				t.Fatalf("%v: StorageKeys(%q): %v", layout, key, err)
			}
			for _, name := range []string{k.Lock, k.Fence, k.Done, k.Record} {
				if name == record {
					t.Errorf("%v: key %q names %q, the configuration record", layout, key, name)
				}
			}
		}
	}
}
