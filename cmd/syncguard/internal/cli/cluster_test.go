package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestCluster lists locks spread over the masters of a Redis Cluster,
// given every node or one seed, then shows and releases one.
func TestCluster(t *testing.T) {
	c := redistest.SharedCluster(t)
	p := prefix(t)
	b := newBackend(t, c.Client(t), redisbackend.Options{Prefix: p, FenceStripes: 64})
	ctx := context.Background()
	const n = 30
	for i := range n {
		if _, err := b.Acquire(ctx, fmt.Sprint("job:", i), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	var seeds []string
	for _, a := range c.Addrs() {
		seeds = append(seeds, "--redis", "redis://"+a)
	}
	for _, tc := range []struct {
		desc string
		args []string
	}{
		{"every node", seeds},
		{"one seed", seeds[:2]},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			r := syncguard(t, append([]string{"ls", "--json", "--prefix", p}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("ls: status %d, stderr %q", r.code, r.err)
			}
			out := lines(r.out)
			keys, nodes := map[string]bool{}, map[string]bool{}
			for _, line := range out[:len(out)-1] {
				var row lsRow
				if err := json.Unmarshal([]byte(line), &row); err != nil {
					t.Fatal(err)
				}
				keys[row.Key] = true
				nodes[row.Node] = true
			}
			if len(keys) != n || len(nodes) != 3 || !strings.Contains(out[len(out)-1], fmt.Sprintf(`"locks":%d`, n)) {
				t.Errorf("ls found %d keys on %d masters (%s), want %d on 3", len(keys), len(nodes), out[len(out)-1], n)
			}
		})
	}

	args := append([]string{"--prefix", p, "--fence-stripes", "64"}, seeds[:2]...)
	r := syncguard(t, append([]string{"show", "job:7"}, args...)...)
	if r.code != 0 || !strings.Contains(r.out, "state          locked") || !strings.Contains(r.out, ":fence::") {
		t.Errorf("show on the cluster: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
	}
	r = syncguard(t, append([]string{"release", "--force", "--yes", "job:7"}, args...)...)
	if locked, _ := b.IsLocked(ctx, "job:7"); r.code != 0 || locked {
		t.Errorf("release on the cluster: status %d, stderr %q, still locked %v", r.code, r.err, locked)
	}
}
