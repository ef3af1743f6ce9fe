package redisbackend_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
)

// embedded is a user's wrapper that embeds the go-redis client, so it
// keeps every method the features need.
type embedded struct{ *redis.Client }

// TestFeatures: Features says which optional features are on and why,
// and New logs once when the client, not an option, turned one off. New
// does no I/O, so the clients point nowhere.
func TestFeatures(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: 2, ReadTimeout: 4 * time.Second, MaxRetryBackoff: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: 2, ReadTimeout: 4 * time.Second, MaxRetryBackoff: time.Second})
	t.Cleanup(func() { _ = cluster.Close() })
	ctxTimeouts := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: 2, ReadTimeout: 4 * time.Second, MaxRetryBackoff: time.Second, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = ctxTimeouts.Close() })
	noDeadlines := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ReadTimeout: -2, WriteTimeout: -2, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = noDeadlines.Close() })
	clusterCtx := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: 2, ReadTimeout: 4 * time.Second, MaxRetryBackoff: time.Second, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = clusterCtx.Close() })
	type want struct {
		notify, coalesce, batch, ack bool
		direct                       bool
		window                       time.Duration
		windowFrom                   string
		logged                       bool
	}
	clientWindow := 2*(4*time.Second+time.Second) + time.Second      // MaxRetries x (ReadTimeout + MaxRetryBackoff) + 1 s
	defaults := 3*(3*time.Second+512*time.Millisecond) + time.Second // go-redis's defaults
	for _, tc := range []struct {
		desc   string
		client redis.Scripter
		opts   redisbackend.Options
		want   want
	}{
		{desc: "client", client: rdb,
			want: want{notify: true, coalesce: true, batch: true, window: clientWindow, windowFrom: "the client's options"}},
		{desc: "client with ContextTimeoutEnabled", client: ctxTimeouts,
			want: want{notify: true, coalesce: true, batch: true, direct: true, window: clientWindow, windowFrom: "the client's options"}},
		{desc: "client without deadlines", client: noDeadlines,
			want: want{notify: true, coalesce: true, batch: true, window: 5 * time.Second, windowFrom: "the client's options"}}, // no read timeout: the minimum window
		{desc: "cluster client", client: cluster,
			want: want{notify: true, coalesce: true, batch: true, window: clientWindow, windowFrom: "the client's options"}},
		{desc: "cluster client with ContextTimeoutEnabled", client: clusterCtx,
			want: want{notify: true, coalesce: true, batch: true, direct: true, window: clientWindow, windowFrom: "the client's options"}},
		{desc: "wrapper embedding the client", client: embedded{rdb},
			want: want{notify: true, coalesce: true, batch: true, window: clientWindow, windowFrom: "the client's options"}},
		{desc: "options turn features off", client: rdb,
			opts: redisbackend.Options{DisableNotifications: true, DisableCoalescing: true, ResendWindow: time.Minute, ReplicaAck: redisbackend.ReplicaAck{N: 1, Timeout: time.Second}},
			want: want{batch: true, ack: true, window: time.Minute, windowFrom: "Options.ResendWindow"}},
		{desc: "only the Scripter methods", client: scripterOnly{rdb},
			want: want{window: defaults, windowFrom: "go-redis's defaults: the client has no Options method", logged: true}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			var log bytes.Buffer
			tc.opts.Logger = newTextLogger(&log)
			b, err := redisbackend.New(tc.client, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			f := b.Features()
			// What Features says is what the Backend does.
			id, err := b.NewLockID("k")
			if err != nil {
				t.Fatal(err)
			}
			w, err := b.Join("k", id, time.Second, time.Second)
			if w != nil {
				w.Leave(true)
			}
			if (err == nil) != f.Notifications.On {
				t.Errorf("Join: %v; Notifications.On: %v", err, f.Notifications.On)
			}
			got := want{
				notify: f.Notifications.On, coalesce: f.Coalescing.On, batch: f.BatchExtend.On, ack: f.ReplicaAck.On,
				direct: f.DirectCalls.On,
				window: f.ResendWindow, windowFrom: f.ResendWindowFrom,
				logged: strings.Contains(log.String(), "lacks methods"),
			}
			if got != tc.want {
				t.Errorf("Features() = %+v (%s), log %q\nwant %+v", got, f, log.String(), tc.want)
			}
			for name, x := range map[string]redisbackend.Feature{
				"Notifications": f.Notifications, "Coalescing": f.Coalescing,
				"BatchExtend": f.BatchExtend, "ReplicaAck": f.ReplicaAck, "DirectCalls": f.DirectCalls,
			} {
				if x.Why == "" {
					t.Errorf("%s.Why is empty", name)
				}
			}
			if tc.desc == "options turn features off" && !strings.Contains(f.Notifications.Why, "DisableNotifications") {
				t.Errorf("Notifications.Why = %q, want it to name the option", f.Notifications.Why)
			}
			if tc.want.logged && !strings.Contains(f.Notifications.Why, "no Subscribe method") {
				t.Errorf("Notifications.Why = %q, want it to name the missing method", f.Notifications.Why)
			}
		})
	}
}

// TestWrappedClusterClient: a wrapper embedding a *redis.ClusterClient gets
// the cluster layout from LayoutAuto, as the client itself does (the single
// layout's scripts would fail with CROSSSLOT on a cluster).
func TestWrappedClusterClient(t *testing.T) {
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { _ = cluster.Close() })
	type wrapped struct{ *redis.ClusterClient }
	b, err := redisbackend.New(wrapped{cluster}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Layout(); got != redisbackend.LayoutCluster {
		t.Errorf("Layout() = %v, want %v", got, redisbackend.LayoutCluster)
	}
}
