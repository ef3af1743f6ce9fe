package redistest_test

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func TestStartSentinelFailover(t *testing.T) {
	t.Parallel()
	start := time.Now()
	st := redistest.StartSentinel(t)
	t.Logf("sentinel setup started in %v", time.Since(start))
	if n := len(st.SentinelAddrs()); n != 3 {
		t.Fatalf("%d sentinels, want 3", n)
	}
	old := st.Primary(t)
	if old != st.Addrs()[0] {
		t.Fatalf("primary %s, want %s", old, st.Addrs()[0])
	}
	c := st.Client(t)
	k := redistest.Prefix(t) + "k"
	if err := c.Set(ctx(t), k, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Wait(ctx(t), 1, 2000).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	st.KillNode(t, old)
	now := st.WaitFailover(t, old, 20*time.Second)
	if now != st.Addrs()[1] {
		t.Fatalf("new primary %s, want the replica %s", now, st.Addrs()[1])
	}
	t.Logf("failover done %v after start", time.Since(start))
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := c.Get(ctx(t), k).Result()
		if err == nil && got == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET through the failover client after failover = %q, %v", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
