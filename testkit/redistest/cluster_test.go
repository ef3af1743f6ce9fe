package redistest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func TestSharedClusterSpreadsKeys(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster(t)
	if c2 := redistest.SharedCluster(t); c2 != c {
		t.Fatal("SharedCluster returned two clusters")
	}
	if n := len(c.Addrs()); n != 6 {
		t.Fatalf("Addrs: %d nodes, want 6", n)
	}
	masters := c.Masters(t)
	if len(masters) != 3 {
		t.Fatalf("Masters = %v, want 3", masters)
	}
	covered := 0
	for _, r := range c.Slots(t) {
		covered += r.End - r.Start + 1
		if len(r.Replicas) != 1 {
			t.Errorf("slots %d-%d: replicas %v, want 1", r.Start, r.End, r.Replicas)
		}
	}
	if covered != 16384 {
		t.Fatalf("slots covered: %d, want 16384", covered)
	}
	cl := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := redistest.Prefix(t)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		k := fmt.Sprintf("%s%d", p, i)
		if err := cl.Set(ctx, k, i, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		slot, err := cl.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		m := c.MasterForSlot(t, int(slot))
		seen[m] = true
		// The key is on that master, read without redirection.
		if got, err := c.NodeClient(t, m).Get(ctx, k).Int(); err != nil || got != i {
			t.Fatalf("GET %s on %s = %v, %v", k, m, got, err)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("100 keys landed on %d masters, want 3", len(seen))
	}
	if r := record(t, func(tb testing.TB) { c.StopNode(tb, masters[0]) }); r.kind != "fatal" {
		t.Fatalf("StopNode on the shared cluster: %s %q, want fatal", r.kind, r.msg)
	}
}

func TestStartClusterFailover(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := redistest.StartCluster(t)
	t.Logf("cluster started in %v", time.Since(start))
	cl := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k := redistest.Prefix(t) + "k"
	if err := cl.Set(ctx, k, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	slot, err := cl.ClusterKeySlot(ctx, k).Result()
	if err != nil {
		t.Fatal(err)
	}
	old := c.MasterForSlot(t, int(slot))
	if err := c.NodeClient(t, old).Wait(ctx, 1, 2000).Err(); err != nil {
		t.Fatal(err)
	}
	c.StopNode(t, old)
	deadline := time.Now().Add(20 * time.Second)
	for c.MasterForSlot(t, int(slot)) == old {
		if time.Now().After(deadline) {
			t.Fatalf("no failover of slot %d within 20s", slot)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.WaitHealthy(t, 20*time.Second)
	// go-redis learns of the new master on a MOVED reply or its periodic
	// reload (10 s); a refused connection to the old one teaches it nothing.
	cl.ReloadState(ctx)
	if got, err := cl.Get(ctx, k).Result(); err != nil || got != "v" {
		t.Fatalf("GET after failover = %q, %v", got, err)
	}
	t.Logf("failover done %v after start", time.Since(start))
}
