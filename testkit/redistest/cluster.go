package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	clusterMasters      = 3
	clusterReplicas     = 1 // per master
	clusterNodeTimeout  = 2000
	clusterReadyTimeout = 30 * time.Second
	clusterCreateTries  = 3
)

// Cluster is a Redis Cluster of 3 masters with one replica each, every node a
// redis-server started by this package on a free 127.0.0.1 port in a dir of
// its own (--cluster-enabled yes --cluster-config-file nodes.conf
// --cluster-node-timeout 2000 --repl-diskless-sync-delay 0
// --repl-ping-replica-period 1 --save ""
// --appendonly no), joined with
// `redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`.
type Cluster struct {
	nodes  []*Server // in creation order: the first 3 start as masters
	shared bool
}

// The per-package shared cluster (see SharedCluster).
var (
	sharedClusterMu  sync.Mutex
	sharedClusterVal *Cluster
	sharedClusterErr error
)

// lookupCLI returns the path of redis-cli, or skips (fails when RequireRedis).
func lookupCLI(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-cli")
	if err == nil {
		return bin
	}
	const msg = "no redis-cli on PATH (a Redis Cluster is created with redis-cli --cluster create); install redis-tools"
	if RequireRedis() {
		t.Fatalf("FAIL: %s (%s=1 makes this a failure)", msg, envRequire)
	}
	t.Skipf("SKIP: %s; set %s=1 to make this a failure", msg, envRequire)
	return ""
}

// StartCluster starts a private 3-master, 3-replica Redis Cluster, waits (at
// most 30 s) until every node reports cluster_state:ok and every replica is
// in sync with its master, and stops it in t.Cleanup. It needs redis-server
// and redis-cli on PATH; without them the test is skipped, or fails when
// SYNCGUARD_REQUIRE_REDIS=1. REDIS_ADDR is ignored.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	bin := lookupServer(t, "redistest.StartCluster needs its own redis-server processes")
	cli := lookupCLI(t)
	// The dirs are made before our cleanup is registered, so they are
	// removed after the processes stop (cleanups run last-in first-out).
	n := clusterMasters * (1 + clusterReplicas)
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	c := &Cluster{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redistest: cluster log tails:\n%s", c.logTails())
		}
		if err := c.stop(); err != nil {
			t.Errorf("redistest: cluster cleanup: %v", err)
		}
	})
	i := 0
	if err := c.start(bin, cli, func() string { i++; return dirs[i-1] }); err != nil {
		t.Fatalf("redistest: StartCluster: %v\n%s", err, c.logTails())
	}
	return c
}

// SharedCluster returns the cluster shared by all tests of this test package,
// started on first use and stopped by Main (without Main, its processes die
// with the test binary on Linux and its temp dirs leak). Tests that share it
// must keep their keys under Prefix(t) and must not stop its nodes.
func SharedCluster(t testing.TB) *Cluster {
	t.Helper()
	skipIfNoRedis(t)
	sharedClusterMu.Lock()
	defer sharedClusterMu.Unlock()
	if sharedClusterVal != nil {
		return sharedClusterVal
	}
	bin := lookupServer(t, "redistest.SharedCluster needs its own redis-server processes")
	cli := lookupCLI(t)
	if sharedClusterErr != nil {
		t.Fatalf("redistest: shared cluster failed to start earlier: %v", sharedClusterErr)
	}
	root, err := os.MkdirTemp("", "redistest-cluster-")
	if err != nil {
		sharedClusterErr = err
		t.Fatalf("redistest: shared cluster: %v", err)
	}
	c := &Cluster{shared: true}
	i := 0
	err = c.start(bin, cli, func() string {
		i++
		d := fmt.Sprintf("%s/node%d", root, i)
		_ = os.MkdirAll(d, 0o755)
		return d
	})
	if err != nil {
		tails := c.logTails()
		_ = c.stop()
		_ = os.RemoveAll(root)
		sharedClusterErr = err
		t.Fatalf("redistest: shared cluster: %v\n%s", err, tails)
	}
	sharedClusterVal = c
	atMainExit(func() {
		sharedClusterMu.Lock()
		sc := sharedClusterVal
		sharedClusterVal = nil
		sharedClusterMu.Unlock()
		if sc != nil {
			if err := sc.stop(); err != nil {
				fmt.Fprintf(os.Stderr, "redistest: stopping shared cluster: %v\n", err)
			}
		}
		_ = os.RemoveAll(root)
	})
	return c
}

func (c *Cluster) start(bin, cli string, newDir func() string) error {
	n := clusterMasters * (1 + clusterReplicas)
	for i := 0; i < n; i++ {
		s := &Server{dir: newDir(), bin: bin, cfg: config{args: []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(clusterNodeTimeout),
			// Replicas sync at once instead of after the default 5 s.
			"--repl-diskless-sync-delay", "0",
			// CLUSTER SLOTS lists a replica only once its replication offset
			// is past 0, i.e. after the master's first replication PING.
			"--repl-ping-replica-period", "1",
		}}}
		c.nodes = append(c.nodes, s)
		if err := s.startFresh(); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
	}
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(clusterReplicas), "--cluster-yes")
	var out []byte
	var err error
	for try := 0; try < clusterCreateTries; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), clusterReadyTimeout)
		out, err = exec.CommandContext(ctx, cli, args...).CombinedOutput()
		cancel()
		if err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return c.waitHealthy(clusterReadyTimeout, true)
}

// waitHealthy waits until every running node reports cluster_state:ok, every
// running node agrees on the slot owners, and every running replica has
// master_link_status:up.
func (c *Cluster) waitHealthy(timeout time.Duration, replicas bool) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if last = c.healthy(replicas); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not healthy after %v: %v", timeout, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) healthy(replicas bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var view string
	for _, s := range c.running() {
		cl := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		info, err := cl.ClusterInfo(ctx).Result()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = fmt.Errorf("%s: cluster_state not ok", s.addr)
		}
		var slots []SlotRange
		if err == nil {
			slots, err = slotRanges(ctx, cl)
		}
		var repl string
		if err == nil {
			repl, err = cl.Info(ctx, "replication").Result()
		}
		_ = cl.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", s.addr, err)
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("%s: replica not in sync with its master", s.addr)
		}
		if replicas {
			for _, sl := range slots {
				if len(sl.Replicas) < clusterReplicas {
					return fmt.Errorf("%s: slots %d-%d have no replica yet", s.addr, sl.Start, sl.End)
				}
			}
		}
		v := slotView(slots)
		if view == "" {
			view = v
		} else if v != view {
			return fmt.Errorf("nodes disagree on slot owners")
		}
	}
	return nil
}

// slotView renders slot ranges and their masters, for comparing nodes' views.
func slotView(slots []SlotRange) string {
	parts := make([]string, 0, len(slots))
	for _, s := range slots {
		parts = append(parts, fmt.Sprintf("%d-%d@%s", s.Start, s.End, s.Master))
	}
	return strings.Join(parts, ",")
}

// slotRanges returns the slot ranges as the node cl sees them, ordered by
// their first slot, each with its master and its replicas that are not
// marked failed: CLUSTER SHARDS, or on a server older than Redis 7.0,
// which lacks it, CLUSTER SLOTS (which lists the same nodes).
func slotRanges(ctx context.Context, cl *redis.Client) ([]SlotRange, error) {
	shards, err := cl.ClusterShards(ctx).Result()
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown subcommand") {
		return legacySlotRanges(ctx, cl)
	}
	if err != nil {
		return nil, err
	}
	var r []SlotRange
	for _, sh := range shards {
		var master string
		var replicas []string
		for _, n := range sh.Nodes {
			host := n.Endpoint
			if host == "" || host == "?" {
				host = n.IP
			}
			addr := net.JoinHostPort(host, strconv.FormatInt(n.Port, 10))
			switch {
			case n.Role == "master":
				master = addr
			case n.Health != "failed":
				replicas = append(replicas, addr)
			}
		}
		for _, sl := range sh.Slots {
			r = append(r, SlotRange{Start: int(sl.Start), End: int(sl.End), Master: master, Replicas: replicas})
		}
	}
	sort.Slice(r, func(i, j int) bool { return r[i].Start < r[j].Start })
	return r, nil
}

// legacySlotRanges is slotRanges on a server before Redis 7.0.
func legacySlotRanges(ctx context.Context, cl *redis.Client) ([]SlotRange, error) {
	//lint:ignore SA1019 the fallback for servers without CLUSTER SHARDS (Redis < 7.0)
	slots, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	r := make([]SlotRange, 0, len(slots))
	for _, sl := range slots {
		sr := SlotRange{Start: int(sl.Start), End: int(sl.End)}
		for i, n := range sl.Nodes {
			if i == 0 {
				sr.Master = n.Addr
			} else {
				sr.Replicas = append(sr.Replicas, n.Addr)
			}
		}
		r = append(r, sr)
	}
	sort.Slice(r, func(i, j int) bool { return r[i].Start < r[j].Start })
	return r, nil
}

func (c *Cluster) running() []*Server {
	var r []*Server
	for _, s := range c.nodes {
		s.mu.Lock()
		up := s.proc != nil && !s.proc.exited()
		s.mu.Unlock()
		if up {
			r = append(r, s)
		}
	}
	return r
}

func (c *Cluster) stop() error {
	var first error
	for _, s := range c.nodes {
		if err := s.stop(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (c *Cluster) logTails() string {
	var b strings.Builder
	for _, s := range c.nodes {
		fmt.Fprintf(&b, "=== node %s\n%s\n", s.addr, s.logTail())
	}
	return b.String()
}

// Addrs returns the "host:port" of every node, masters and replicas, in
// creation order (the first three were created as masters).
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		a[i] = s.addr
	}
	return a
}

// Client returns a new ClusterClient seeded with every node, with opts applied
// last; it is closed in t.Cleanup.
func (c *Cluster) Client(t testing.TB, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	t.Helper()
	o := &redis.ClusterOptions{Addrs: c.Addrs()}
	for _, f := range opts {
		f(o)
	}
	cl := redis.NewClusterClient(o)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// NodeClient returns a plain client for one node (no redirections followed);
// it is closed in t.Cleanup.
func (c *Cluster) NodeClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// SlotRange is a range of hash slots served by one master.
type SlotRange struct {
	// Start and End are the first and last slot of the range, inclusive.
	Start, End int
	Master     string   // host:port
	Replicas   []string // host:port
}

// Slots returns the cluster's slot ranges as a running node sees them
// (CLUSTER SHARDS), ordered by their first slot.
func (c *Cluster) Slots(t testing.TB) []SlotRange {
	t.Helper()
	nodes := c.running()
	if len(nodes) == 0 {
		t.Fatalf("redistest: Slots: no node is running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var lastErr error
	for _, s := range nodes {
		cl := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		r, err := slotRanges(ctx, cl)
		_ = cl.Close()
		if err != nil {
			lastErr = err
			continue
		}
		return r
	}
	t.Fatalf("redistest: CLUSTER SHARDS: %v", lastErr)
	return nil
}

// Masters returns the addresses of the masters that serve slots.
func (c *Cluster) Masters(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	var m []string
	for _, r := range c.Slots(t) {
		if !seen[r.Master] {
			seen[r.Master] = true
			m = append(m, r.Master)
		}
	}
	return m
}

// MasterForSlot returns the address of the master serving slot.
func (c *Cluster) MasterForSlot(t testing.TB, slot int) string {
	t.Helper()
	for _, r := range c.Slots(t) {
		if r.Start <= slot && slot <= r.End {
			return r.Master
		}
	}
	t.Fatalf("redistest: no master serves slot %d", slot)
	return ""
}

// Node returns the node at addr, or fails the test.
func (c *Cluster) Node(t testing.TB, addr string) *Server {
	t.Helper()
	return nodeAt(t, c.nodes, addr, "cluster node")
}

// nodeAt returns the server of nodes listening on addr, or fails the test
// naming what kind of node was looked for.
func nodeAt(t testing.TB, nodes []*Server, addr, kind string) *Server {
	t.Helper()
	for _, s := range nodes {
		if s.addr == addr {
			return s
		}
	}
	t.Fatalf("redistest: no %s at %s", kind, addr)
	return nil
}

// StopNode stops the node at addr (SIGTERM, then SIGKILL). Not allowed on the
// shared cluster. Restart it with c.Node(t, addr).Restart(t).
func (c *Cluster) StopNode(t testing.TB, addr string) {
	t.Helper()
	if c.shared {
		t.Fatalf("redistest: StopNode is not allowed on the shared cluster (other tests use it); use redistest.StartCluster")
	}
	s := c.Node(t, addr)
	if err := s.stop(); err != nil {
		t.Fatalf("redistest: StopNode %s: %v\n%s", addr, err, s.logTail())
	}
}

// Pause freezes every node with SIGSTOP, as Server.Pause freezes one: a
// cluster that stalls. Not allowed on the shared cluster. Resume
// continues them.
func (c *Cluster) Pause(t testing.TB) { c.eachNode(t, "Pause", (*Server).Pause) }

// Resume continues every node with SIGCONT, as Server.Resume does one.
func (c *Cluster) Resume(t testing.TB) { c.eachNode(t, "Resume", (*Server).Resume) }

// eachNode runs f (op) on every node of a cluster that is not shared.
func (c *Cluster) eachNode(t testing.TB, op string, f func(*Server, testing.TB)) {
	t.Helper()
	if c.shared {
		t.Fatalf("redistest: %s is not allowed on the shared cluster (other tests use it); use redistest.StartCluster", op)
	}
	for _, s := range c.nodes {
		f(s, t)
	}
}

// WaitHealthy waits (at most timeout) until every running node reports
// cluster_state:ok and agrees on the slot owners, and every running replica
// is in sync with its master, e.g. after a failover.
func (c *Cluster) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	if err := c.waitHealthy(timeout, false); err != nil {
		t.Fatalf("redistest: %v\n%s", err, c.logTails())
	}
}

// KillNode SIGKILLs the node at addr: no shutdown, so writes its replica has
// not received yet are lost, as in a crash. Not allowed on the shared cluster.
func (c *Cluster) KillNode(t testing.TB, addr string) {
	t.Helper()
	if c.shared {
		t.Fatalf("redistest: KillNode is not allowed on the shared cluster (other tests use it); use redistest.StartCluster")
	}
	s := c.Node(t, addr)
	if err := s.kill(); err != nil {
		t.Fatalf("redistest: KillNode %s: %v", addr, err)
	}
}

// NodeID returns the cluster node id of the node at addr (CLUSTER MYID).
func (c *Cluster) NodeID(t testing.TB, addr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl := redis.NewClient(&redis.Options{Addr: addr})
	defer cl.Close()
	id, err := cl.Do(ctx, "cluster", "myid").Text()
	if err != nil {
		t.Fatalf("redistest: CLUSTER MYID on %s: %v", addr, err)
	}
	return id
}
