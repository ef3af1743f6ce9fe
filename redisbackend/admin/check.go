package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/internal/errmap"
	"github.com/syncguard-go/syncguard/redisbackend/internal/operator"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// Severity grades a Finding of Check. Severities are ordered: SeverityOK <
// SeverityInfo < SeverityUnknown < SeverityWarning < SeveritySevere, so a
// report's worst finding is the one with the largest Severity.
type Severity int

const (
	// SeverityOK means the setting keeps fences safe; nothing to do.
	SeverityOK Severity = iota
	// SeverityInfo is worth knowing but costs no fence.
	SeverityInfo
	// SeverityUnknown means the server would not tell, as managed Redis
	// often will not: check the setting with the provider.
	SeverityUnknown
	// SeverityWarning means a fence can be granted twice after a crash or
	// a failover, or acquires fail, until the setting changes.
	SeverityWarning
	// SeveritySevere means fences go back after a restart or an eviction,
	// or no acquire can work.
	SeveritySevere
)

// String returns "ok", "info", "unknown", "warning" or "severe".
func (s Severity) String() string {
	switch s {
	case SeverityOK:
		return "ok"
	case SeverityInfo:
		return "info"
	case SeverityUnknown:
		return "unknown"
	case SeverityWarning:
		return "warning"
	case SeveritySevere:
		return "severe"
	}
	return "Severity(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText encodes s as its String, for JSON and other text formats.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// The names of the findings of Check. Every node checked gets one finding
// of each name, in this order.
const (
	// CheckVersion is the finding on the Redis version (INFO server).
	CheckVersion = "version"
	// CheckPersistence is the finding on AOF and RDB (CONFIG GET appendonly,
	// appendfsync, save): what of the fence counters survives a restart.
	CheckPersistence = "persistence"
	// CheckEviction is the finding on maxmemory and maxmemory-policy: whether
	// fence counters, which have no TTL, can be evicted.
	CheckEviction = "eviction"
	// CheckReplication is the finding on the server's role and replicas
	// (INFO replication) against Options.ReplicaAck: what a failover keeps.
	CheckReplication = "replication"
	// CheckCluster is the finding on cluster mode (INFO cluster) against the
	// client and the key layout.
	CheckCluster = "cluster"
)

// Finding is one result of Check.
type Finding struct {
	// Name is one of the Check names, or CheckConfig: stable, for programs.
	Name string `json:"name"`
	// Node is the address of the cluster master the finding is about, or
	// empty for a client that talks to one server.
	Node string `json:"node,omitempty"`
	// Severity grades the finding.
	Severity Severity `json:"severity"`
	// Message says in one line what the server does.
	Message string `json:"message"`
	// Advice says in one line what to do; empty when nothing is needed.
	Advice string `json:"advice,omitempty"`
}

// String formats f on one line: "<severity> <name> [node]: message -> advice".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Severity.String())
	b.WriteByte(' ')
	b.WriteString(f.Name)
	if f.Node != "" {
		b.WriteString(" [" + f.Node + "]")
	}
	b.WriteString(": ")
	b.WriteString(f.Message)
	if f.Advice != "" {
		b.WriteString(" -> ")
		b.WriteString(f.Advice)
	}
	return b.String()
}

// Report is what Check found: one Finding of each name per node, grouped
// by node in address order.
type Report struct {
	// Findings holds one finding per check name (CheckVersion ...
	// CheckCluster) and node.
	Findings []Finding `json:"findings"`
}

// Worst returns the largest Severity of r's findings (SeverityOK for none).
func (r Report) Worst() Severity {
	w := SeverityOK
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}

// String formats r with one finding per line.
func (r Report) String() string {
	var b strings.Builder
	for i, f := range r.Findings {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.String())
	}
	return b.String()
}

// masterLister is a *redis.ClusterClient, or a wrapper embedding one:
// Check asks each of its masters.
type masterLister interface {
	ForEachMaster(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
}

// Check reads the settings of the Redis server behind b and reports what
// they mean for fences. It says whether a fence survives a restart, an
// eviction and a failover, and whether the scripts can run at all. On a
// *redis.ClusterClient it checks every master.
//
// A server that refuses CONFIG or INFO gives SeverityUnknown findings, not
// an error. The error is for a server Check cannot use at all: unreachable,
// refusing the credentials, or ctx done. Check writes nothing. When other
// instances on the prefix recorded another configuration, the report ends
// with a CheckConfig finding. docs/fences.md describes the findings.
func Check(ctx context.Context, b *redisbackend.Backend) (Report, error) {
	const op = "check"
	if err := errmap.CheckCtx(op, ctx); err != nil {
		return Report{}, err
	}
	// Like every call, Check returns by ctx's deadline.
	var (
		r   Report
		err error
	)
	c := checker{b: b, view: b.Operator()}
	if berr := transport.Bounded(ctx, func(ctx context.Context) { r, err = c.check(ctx) }); berr != nil {
		return Report{}, errmap.Map(ctx, op, berr)
	}
	if err != nil {
		return r, err
	}
	// Instances that disagree on the key names: a finding of its own,
	// only then (CheckRecordedConfig tells the rest).
	if f, ferr := CheckRecordedConfig(ctx, b); ferr == nil && f.Severity >= SeverityWarning {
		r.Findings = append(r.Findings, f)
	}
	return r, nil
}

// checker is one Check of b.
type checker struct {
	b    *redisbackend.Backend
	view operator.Backend
}

// check is Check without the bound on its duration.
func (k checker) check(ctx context.Context) (Report, error) {
	const op = "check"
	client := k.view.Client()
	c, isCluster := client.(masterLister)
	if !isCluster {
		fs, err := k.checkNode(ctx, client, "")
		if err != nil {
			return Report{}, errmap.Map(ctx, op, err)
		}
		return Report{Findings: fs}, nil
	}
	var (
		r       Report
		mu      sync.Mutex
		reached int
		failed  error
	)
	err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		addr := n.Options().Addr
		fs, err := k.checkNode(ctx, n, addr)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			// One master down is a finding; every master down is the
			// error below.
			failed = err
			why := "the master does not answer (" + strings.TrimSpace(err.Error()) + ")"
			for _, name := range checkNames {
				f := unknown(name, why)
				f.Node = addr
				f.Advice = "bring the master back (or let a replica take over) and run Check again"
				r.Findings = append(r.Findings, f)
			}
			return nil
		}
		reached++
		r.Findings = append(r.Findings, fs...)
		return nil
	})
	if err == nil && reached == 0 && failed != nil {
		err = failed
	}
	if err != nil {
		return Report{}, errmap.Map(ctx, op, err)
	}
	// ForEachMaster runs the nodes concurrently; keep each node's findings
	// in their order, and the nodes in address order.
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Node < r.Findings[j].Node })
	return r, nil
}

// nodeState is what one server told Check. A nil map is a section the
// server refused; its error is in the matching error field.
type nodeState struct {
	info    map[string]map[string]string // section -> field -> value
	infoErr map[string]error
	config  map[string]string // parameter -> value, for those CONFIG GET returned
	confErr map[string]error  // parameter -> the server's refusal
}

var (
	checkNames    = []string{CheckVersion, CheckPersistence, CheckEviction, CheckReplication, CheckCluster}
	checkSections = []string{"server", "persistence", "replication", "memory", "cluster"}
	checkParams   = []string{"appendonly", "appendfsync", "save", "maxmemory", "maxmemory-policy"}
)

// checkNode asks one server for its settings in one pipeline and judges
// them. It returns an error only when the server cannot be used at all.
func (k checker) checkNode(ctx context.Context, c redis.Cmdable, node string) ([]Finding, error) {
	st, err := readNodeState(ctx, c)
	if err != nil {
		return nil, err
	}
	_, isCluster := k.view.Client().(masterLister)
	fs := []Finding{
		checkVersion(st),
		checkPersistence(st),
		checkEviction(st),
		checkReplication(st, k.view.ReplicaAckN()),
		checkCluster(st, isCluster, k.b.Layout()),
	}
	for i := range fs {
		fs[i].Node = node
	}
	return fs, nil
}

// readNodeState reads what Check judges of one server in one pipeline:
// the INFO sections and CONFIG parameters it needs. A section or
// parameter the server refuses is kept as its error; a failure to reach
// the server is returned.
func readNodeState(ctx context.Context, c redis.Cmdable) (nodeState, error) {
	p := c.Pipeline()
	ping := p.Ping(ctx)
	infos := make([]*redis.StringCmd, len(checkSections))
	for i, s := range checkSections {
		// One section per INFO: several in one is Redis 7 only.
		infos[i] = p.Info(ctx, s)
	}
	confs := make([]*redis.MapStringStringCmd, len(checkParams))
	for i, name := range checkParams {
		// One parameter per CONFIG GET, likewise (and never "*", which
		// would include secrets such as requirepass).
		confs[i] = p.ConfigGet(ctx, name)
	}
	_, _ = p.Exec(ctx) // per-command errors are read below
	if err := ping.Err(); err != nil && !redis.IsPermissionError(err) {
		return nodeState{}, err // unreachable, NOAUTH, LOADING...: Check cannot work
	}
	st := nodeState{
		info:    map[string]map[string]string{},
		infoErr: map[string]error{},
		config:  map[string]string{},
		confErr: map[string]error{},
	}
	for i, s := range checkSections {
		v, err := infos[i].Result()
		if err != nil {
			if !isReply(err) {
				return nodeState{}, err
			}
			st.infoErr[s] = err
			continue
		}
		st.info[s] = parseInfo(v)
	}
	for i, name := range checkParams {
		m, err := confs[i].Result()
		if err != nil {
			if !isReply(err) {
				return nodeState{}, err
			}
			st.confErr[name] = err
			continue
		}
		if v, ok := m[name]; ok {
			st.config[name] = v
		}
	}
	return st, nil
}

// isReply reports whether err is the server's answer (an unknown command,
// NOPERM, an unsupported INFO section) rather than a failure to get one.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}

// parseInfo parses an INFO reply ("field:value" lines, "#" comments).
func parseInfo(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

func unknown(name, msg string) Finding {
	return Finding{Name: name, Severity: SeverityUnknown, Message: msg, Advice: unknownAdvice[name]}
}

// unknownAdvice is what to check by other means when the server will not tell.
var unknownAdvice = map[string]string{
	CheckVersion:     "make sure the server is Redis " + redisbackend.MinRedisVersion + " or later (the scripts need it)",
	CheckPersistence: "ask your provider: fences need appendonly yes with appendfsync always (everysec can lose the last second on a crash)",
	CheckEviction:    "ask your provider: fence counters have no TTL, so maxmemory-policy must be noeviction or volatile-*",
	CheckReplication: "if the server has replicas that can be promoted, set Options.ReplicaAck",
	CheckCluster:     "use a *redis.ClusterClient if the server is a Redis Cluster node",
}

// refused describes why the server did not answer what.
func refused(what string, err error) string {
	if err == nil {
		return "the server gives no " + what
	}
	return fmt.Sprintf("the server does not answer %s (%s)", what, strings.TrimSpace(err.Error()))
}

// confRefused describes why CONFIG GET did not give all of params.
func confRefused(st nodeState, params ...string) string {
	for _, p := range params {
		if err := st.confErr[p]; err != nil {
			return refused("CONFIG GET "+p, err)
		}
	}
	return refused("CONFIG GET "+strings.Join(params, "/"), nil)
}

// replicas formats a replica count: "1 replica", "2 replicas".
func replicas(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return strconv.Itoa(n) + " replicas"
}

func checkVersion(st nodeState) Finding {
	srv := st.info["server"]
	if srv == nil {
		return unknown(CheckVersion, refused("INFO server", st.infoErr["server"]))
	}
	v := srv["redis_version"]
	major, minor, ok := parseVersion(v)
	if !ok {
		return unknown(CheckVersion, fmt.Sprintf("INFO server gives no usable redis_version (%q)", v))
	}
	if major < 6 || major == 6 && minor < 2 {
		return Finding{Name: CheckVersion, Severity: SeveritySevere,
			Message: fmt.Sprintf("Redis %s is older than %s: a release uses SET with GET, which it refuses, so no lock is ever released", v, redisbackend.MinRedisVersion),
			Advice:  "upgrade to Redis " + redisbackend.MinRedisVersion + " or later"}
	}
	return Finding{Name: CheckVersion, Severity: SeverityOK,
		Message: fmt.Sprintf("Redis %s (the scripts need %s or later)", v, redisbackend.MinRedisVersion)}
}

// parseVersion reads the major and minor numbers of a redis_version,
// "major.minor[.patch]".
func parseVersion(v string) (major, minor int, ok bool) {
	ma, rest, ok := strings.Cut(v, ".")
	if !ok {
		return 0, 0, false
	}
	major, err := strconv.Atoi(ma)
	minor, err2 := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
	if err != nil || err2 != nil {
		return 0, 0, false
	}
	return major, minor, true
}

func checkPersistence(st nodeState) Finding {
	const name = CheckPersistence
	aof, okA := st.config["appendonly"]
	fsync, okF := st.config["appendfsync"]
	save, okS := st.config["save"]
	if !okA || !okF || !okS {
		msg := confRefused(st, "appendonly", "appendfsync", "save")
		if p := st.info["persistence"]; p != nil {
			// INFO says whether the AOF is on, not how often it is synced.
			switch p["aof_enabled"] {
			case "1":
				msg += "; INFO persistence: AOF on, fsync policy unknown"
			case "0":
				msg += "; INFO persistence: AOF off, snapshot rules unknown"
			}
		}
		return unknown(name, msg)
	}
	save = strings.TrimSpace(save)
	if strings.EqualFold(aof, "yes") {
		switch strings.ToLower(fsync) {
		case "always":
			return Finding{Name: name, Severity: SeverityOK,
				Message: "AOF with appendfsync always: a fence is on disk before Redis answers, so a restart or crash keeps every counter"}
		case "everysec":
			return Finding{Name: name, Severity: SeverityWarning,
				Message: "AOF with appendfsync everysec: a crash of the host can lose about the last second of writes (two when the disk is slow), and the fences granted in it are granted again",
				Advice:  "set appendfsync always, or accept that window"}
		default:
			return Finding{Name: name, Severity: SeverityWarning,
				Message: fmt.Sprintf("AOF with appendfsync %s: the OS decides when writes reach the disk (typically every 30 s); a crash of the host loses the fences granted since, and grants them again", fsync),
				Advice:  "set appendfsync always (everysec narrows the window to about a second)"}
		}
	}
	if save != "" {
		return Finding{Name: name, Severity: SeverityWarning,
			Message: fmt.Sprintf("RDB snapshots only (save %q): a crash loses the fence counters' increments since the last snapshot, and those fences are granted again", save),
			Advice:  "turn on the AOF: appendonly yes with appendfsync always"}
	}
	return Finding{Name: name, Severity: SeveritySevere,
		Message: `no persistence (appendonly no, save ""): a restart empties Redis and every per-key fence counter starts again at 1 (striped counters restart from the server's clock, see Options.FenceStripes)`,
		Advice:  "set appendonly yes with appendfsync always"}
}

func checkEviction(st nodeState) Finding {
	const name = CheckEviction
	policy, okP := st.config["maxmemory-policy"]
	maxStr, okM := st.config["maxmemory"]
	source := ""
	if mem := st.info["memory"]; (!okP || !okM) && mem != nil {
		// Managed Redis often forbids CONFIG but INFO memory tells.
		policy, okP = mem["maxmemory_policy"]
		maxStr, okM = mem["maxmemory"]
		source = " (from INFO memory)"
	}
	maxBytes, err := strconv.ParseInt(maxStr, 10, 64)
	if !okP || !okM || err != nil {
		msg := confRefused(st, "maxmemory-policy", "maxmemory")
		if e := st.infoErr["memory"]; e != nil {
			msg += " or INFO memory (" + strings.TrimSpace(e.Error()) + ")"
		}
		return unknown(name, msg)
	}
	limit := "maxmemory " + formatBytes(maxBytes)
	if maxBytes == 0 {
		limit = "maxmemory 0 (no limit)"
	}
	switch {
	case strings.HasPrefix(policy, "allkeys-"):
		msg := fmt.Sprintf("maxmemory-policy %s%s: when memory is full Redis evicts any key, fence counters included (they have no TTL), and an evicted per-key counter starts its fences again at 1", policy, source)
		if maxBytes == 0 {
			msg += "; with " + limit + " only once a limit is set"
		}
		return Finding{Name: name, Severity: SeveritySevere, Message: msg,
			Advice: "set maxmemory-policy noeviction (or a volatile-* policy)"}
	case policy == "noeviction":
		if maxBytes == 0 {
			return Finding{Name: name, Severity: SeverityOK,
				Message: "maxmemory-policy noeviction" + source + " with " + limit + ": nothing is ever evicted"}
		}
		return Finding{Name: name, Severity: SeverityOK,
			Message: "maxmemory-policy noeviction" + source + " with " + limit + ": when memory is full, writes fail with OOM, so acquires fail rather than lose fences"}
	case strings.HasPrefix(policy, "volatile-"):
		if maxBytes == 0 {
			return Finding{Name: name, Severity: SeverityOK,
				Message: fmt.Sprintf("maxmemory-policy %s%s with %s: nothing is evicted, and the policy would evict only keys with a TTL, never fence counters", policy, source, limit)}
		}
		return Finding{Name: name, Severity: SeverityInfo,
			Message: fmt.Sprintf("maxmemory-policy %s%s with %s evicts only keys with a TTL: fence counters (no TTL) stay, but a held lock's keys can be evicted when memory is full, letting the next holder in early (its fence is still larger)", policy, source, limit),
			Advice:  "use noeviction to keep locks too, or keep memory headroom"}
	}
	return unknown(name, fmt.Sprintf("maxmemory-policy %q%s is not one Check knows", policy, source))
}

// formatBytes prints n in the largest unit of Redis's config syntax that
// divides it (1gb, 512mb, 100kb), or in bytes.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func checkReplication(st nodeState, ack int) Finding {
	const name = CheckReplication
	repl := st.info["replication"]
	if repl == nil {
		return unknown(name, refused("INFO replication", st.infoErr["replication"]))
	}
	role := repl["role"]
	if role == "slave" || role == "replica" {
		return Finding{Name: name, Severity: SeverityWarning,
			Message: fmt.Sprintf("the server is a replica of %s:%s: it refuses writes (READONLY), so acquires fail", repl["master_host"], repl["master_port"]),
			Advice:  "point the client at the primary (or use a failover client)"}
	}
	if role != "master" {
		return unknown(name, fmt.Sprintf("INFO replication gives role %q", role))
	}
	n, err := strconv.Atoi(repl["connected_slaves"])
	if err != nil {
		return unknown(name, fmt.Sprintf("INFO replication gives connected_slaves %q", repl["connected_slaves"]))
	}
	switch {
	case n == 0 && ack == 0:
		return Finding{Name: name, Severity: SeverityInfo,
			Message: "primary with no replicas: no failover can grant a fence twice (what a restart keeps is the persistence finding)",
			Advice:  "if you add replicas that can be promoted, set Options.ReplicaAck"}
	case ack > n:
		return Finding{Name: name, Severity: SeverityWarning,
			Message: fmt.Sprintf("Options.ReplicaAck waits for %s but the primary has %d connected: every Acquire fails after ReplicaAck.Timeout", replicas(ack), n),
			Advice:  "connect the replicas or lower ReplicaAck.N"}
	case ack == 0:
		return Finding{Name: name, Severity: SeverityWarning,
			Message: fmt.Sprintf("primary with %s and Options.ReplicaAck off: replication is asynchronous, so a failover to a replica that lacked the last writes grants those fences and locks again", replicas(n)),
			Advice:  fmt.Sprintf("set Options.ReplicaAck (N: %d, a Timeout below the client's ReadTimeout) so Acquire waits for the replicas", n)}
	case ack < n:
		return Finding{Name: name, Severity: SeverityInfo,
			Message: fmt.Sprintf("primary with %s; Options.ReplicaAck waits for %d: a failover that promotes a replica that did not acknowledge can still grant a fence twice", replicas(n), ack),
			Advice:  fmt.Sprintf("set ReplicaAck.N to %d, or let only acknowledged replicas be promoted", n)}
	}
	return Finding{Name: name, Severity: SeverityOK,
		Message: fmt.Sprintf("primary with %s; Options.ReplicaAck waits for all of them, so a fence Acquire returned survives a failover", replicas(n))}
}

func checkCluster(st nodeState, clusterClient bool, layout redisbackend.Layout) Finding {
	const name = CheckCluster
	cl := st.info["cluster"]
	if cl == nil {
		return unknown(name, refused("INFO cluster", st.infoErr["cluster"]))
	}
	enabled := cl["cluster_enabled"] == "1"
	switch {
	case enabled && !clusterClient:
		return Finding{Name: name, Severity: SeverityWarning,
			Message: "the server is a Redis Cluster node but the client is not a *redis.ClusterClient: locks whose keys hash to another node's slots fail (MOVED)",
			Advice:  "use redis.NewClusterClient"}
	case enabled && layout != redisbackend.LayoutCluster:
		return Finding{Name: name, Severity: SeverityWarning,
			Message: "Redis Cluster with the single key layout: a lock's keys hash to different slots, so its scripts fail (CROSSSLOT)",
			Advice:  "use LayoutCluster (the default for a *redis.ClusterClient)"}
	case enabled:
		return Finding{Name: name, Severity: SeverityOK,
			Message: "Redis Cluster master; the cluster layout keeps each lock's keys in one hash slot, and keys with a hash tag of their own ({acct}:1) in their tag's slot " +
				"(a version from before that rule names such keys otherwise: upgrade all instances at once, docs/cluster.md)"}
	case clusterClient:
		return Finding{Name: name, Severity: SeverityWarning,
			Message: "a *redis.ClusterClient on a server with cluster mode off",
			Advice:  "use redis.NewClient for a standalone server"}
	}
	return Finding{Name: name, Severity: SeverityOK, Message: "standalone server (cluster mode off)"}
}
