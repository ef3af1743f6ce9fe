package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMasterName is the name the sentinels of StartSentinel monitor.
const SentinelMasterName = "syncguard"

const (
	sentinelCount       = 3
	sentinelQuorum      = 2
	sentinelDownAfterMs = 1000
	sentinelFailoverMs  = 5000
	sentinelReadyTime   = 30 * time.Second
)

// Sentinel is a replicated primary watched by Redis Sentinel: a primary, one
// replica and three sentinels (quorum 2, down-after-milliseconds 1000,
// failover-timeout 5000), every process a redis-server started by this
// package on a free 127.0.0.1 port in a dir of its own. The sentinels run
// as `redis-server <conf> --sentinel`.
type Sentinel struct {
	nodes     []*Server // the primary, then the replica, as started
	sentinels []*Server
}

// StartSentinel starts a primary, a replica and three sentinels, waits (at
// most 30 s) until the replica is in sync and every sentinel knows the
// replica and the other two sentinels, and stops everything in t.Cleanup.
// It needs redis-server on PATH (skip, or fail when SYNCGUARD_REQUIRE_REDIS=1).
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin := lookupServer(t, "redistest.StartSentinel needs its own redis-server processes")
	dirs := make([]string, 2+sentinelCount)
	for i := range dirs {
		dirs[i] = t.TempDir() // before our cleanup: removed after the processes stop
	}
	st := &Sentinel{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redistest: sentinel setup log tails:\n%s", st.logTails())
		}
		for _, s := range append(append([]*Server(nil), st.sentinels...), st.nodes...) {
			if err := s.stop(); err != nil {
				t.Errorf("redistest: sentinel cleanup: %v", err)
			}
		}
	})
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("redistest: StartSentinel: %s\n%s", fmt.Sprintf(format, args...), st.logTails())
	}
	repl := []string{"--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1"}
	primary := &Server{dir: dirs[0], bin: bin, cfg: config{args: repl}}
	st.nodes = append(st.nodes, primary)
	if err := primary.startFresh(); err != nil {
		fail("primary: %v", err)
	}
	replica := &Server{dir: dirs[1], bin: bin, cfg: config{args: append(append([]string(nil), repl...),
		"--replicaof", "127.0.0.1", strconv.Itoa(primary.port))}}
	st.nodes = append(st.nodes, replica)
	if err := replica.startFresh(); err != nil {
		fail("replica: %v", err)
	}
	for i := 0; i < sentinelCount; i++ {
		dir := dirs[2+i]
		conf := filepath.Join(dir, "sentinel.conf")
		body := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d %[3]d\n"+
			"sentinel down-after-milliseconds %[1]s %[4]d\n"+
			"sentinel failover-timeout %[1]s %[5]d\n"+
			"sentinel parallel-syncs %[1]s 1\n",
			SentinelMasterName, primary.port, sentinelQuorum, sentinelDownAfterMs, sentinelFailoverMs)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			fail("%v", err)
		}
		s := &Server{dir: dir, bin: bin, cfg: config{pre: []string{conf, "--sentinel"}}}
		st.sentinels = append(st.sentinels, s)
		if err := s.startFresh(); err != nil {
			fail("sentinel %d: %v", i, err)
		}
	}
	if err := st.waitReady(sentinelReadyTime); err != nil {
		fail("%v", err)
	}
	return st
}

func (st *Sentinel) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if last = st.ready(); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %v", timeout, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (st *Sentinel) ready() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	primary := st.askPrimary(ctx)
	if primary == "" {
		return fmt.Errorf("no sentinel names a primary")
	}
	for _, s := range st.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		m, err := c.Master(ctx, SentinelMasterName).Result()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("sentinel %s: %w", s.addr, err)
		}
		if net.JoinHostPort(m["ip"], m["port"]) != primary {
			return fmt.Errorf("sentinel %s: primary %s:%s, others say %s", s.addr, m["ip"], m["port"], primary)
		}
		if strings.Contains(m["flags"], "down") {
			return fmt.Errorf("sentinel %s: primary flags %s", s.addr, m["flags"])
		}
		if m["num-slaves"] == "0" || m["num-other-sentinels"] != strconv.Itoa(sentinelCount-1) {
			return fmt.Errorf("sentinel %s: %s replicas, %s other sentinels", s.addr, m["num-slaves"], m["num-other-sentinels"])
		}
	}
	// Every running replica of the primary is in sync.
	for _, s := range st.nodes {
		if !s.isRunning() || s.addr == primary {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		info, err := c.Info(ctx, "replication").Result()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", s.addr, err)
		}
		if !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("replica %s not in sync", s.addr)
		}
	}
	return nil
}

func (s *Server) isRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited()
}

// askPrimary returns the primary's address as the first answering sentinel
// sees it, or "".
func (st *Sentinel) askPrimary(ctx context.Context) string {
	for _, s := range st.sentinels {
		if !s.isRunning() {
			continue
		}
		c := redis.NewSentinelClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		a, err := c.GetMasterAddrByName(ctx, SentinelMasterName).Result()
		_ = c.Close()
		if err == nil && len(a) == 2 {
			return net.JoinHostPort(a[0], a[1])
		}
	}
	return ""
}

func (st *Sentinel) logTails() string {
	var b strings.Builder
	for i, s := range append(append([]*Server(nil), st.nodes...), st.sentinels...) {
		kind := "data node"
		if i >= len(st.nodes) {
			kind = "sentinel"
		}
		fmt.Fprintf(&b, "=== %s %s\n%s\n", kind, s.addr, s.logTail())
	}
	return b.String()
}

// SentinelAddrs returns the sentinels' "host:port".
func (st *Sentinel) SentinelAddrs() []string {
	a := make([]string, len(st.sentinels))
	for i, s := range st.sentinels {
		a[i] = s.addr
	}
	return a
}

// Addrs returns the data nodes' "host:port", the initial primary first.
func (st *Sentinel) Addrs() []string {
	a := make([]string, len(st.nodes))
	for i, s := range st.nodes {
		a[i] = s.addr
	}
	return a
}

// Client returns a failover client (redis.NewFailoverClient) for the
// monitored primary, with opts applied last; it is closed in t.Cleanup.
func (st *Sentinel) Client(t testing.TB, opts ...func(*redis.FailoverOptions)) *redis.Client {
	t.Helper()
	o := &redis.FailoverOptions{MasterName: SentinelMasterName, SentinelAddrs: st.SentinelAddrs()}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewFailoverClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Primary returns the primary's address as the sentinels report it.
func (st *Sentinel) Primary(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a := st.askPrimary(ctx)
	if a == "" {
		t.Fatalf("redistest: no sentinel names a primary\n%s", st.logTails())
	}
	return a
}

func (st *Sentinel) node(t testing.TB, addr string) *Server {
	t.Helper()
	return nodeAt(t, st.nodes, addr, "data node")
}

// KillNode SIGKILLs the data node at addr (a crash: no shutdown, so writes
// not yet replicated are lost).
func (st *Sentinel) KillNode(t testing.TB, addr string) {
	t.Helper()
	if err := st.node(t, addr).kill(); err != nil {
		t.Fatalf("redistest: KillNode %s: %v", addr, err)
	}
}

// StopNode stops the data node at addr gracefully (SIGTERM: a primary first
// lets its replicas catch up, up to shutdown-timeout).
func (st *Sentinel) StopNode(t testing.TB, addr string) {
	t.Helper()
	if err := st.node(t, addr).stop(); err != nil {
		t.Fatalf("redistest: StopNode %s: %v", addr, err)
	}
}

// WaitFailover waits (at most timeout) until the sentinels name a primary
// other than old, and returns it.
func (st *Sentinel) WaitFailover(t testing.TB, old string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		a := st.askPrimary(ctx)
		cancel()
		if a != "" && a != old {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: no failover away from %s within %v\n%s", old, timeout, st.logTails())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// RestartNode starts the stopped or killed data node at addr again (same
// port and dir, no data: persistence is off). The sentinels then turn it
// into a replica of the current primary; WaitReady waits for that.
func (st *Sentinel) RestartNode(t testing.TB, addr string) {
	t.Helper()
	st.node(t, addr).Restart(t)
}

// RestartAsReplica starts the stopped or killed data node at addr again as a
// replica of primary (--replicaof), what the sentinels would make of it a
// few seconds later anyway.
func (st *Sentinel) RestartAsReplica(t testing.TB, addr, primary string) {
	t.Helper()
	host, port, err := net.SplitHostPort(primary)
	if err != nil {
		t.Fatalf("redistest: RestartAsReplica: %v", err)
	}
	s := st.node(t, addr)
	var args []string
	for i := 0; i < len(s.cfg.args); i++ {
		if s.cfg.args[i] == "--replicaof" && i+2 < len(s.cfg.args) {
			i += 2
			continue
		}
		args = append(args, s.cfg.args[i])
	}
	s.cfg.args = append(args, "--replicaof", host, port)
	s.Restart(t)
}

// WaitReady waits (at most timeout) until every sentinel agrees on a
// primary that is up, knows a replica and the other sentinels, and every
// running replica is in sync.
func (st *Sentinel) WaitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	if err := st.waitReady(timeout); err != nil {
		t.Fatalf("redistest: %v\n%s", err, st.logTails())
	}
}
