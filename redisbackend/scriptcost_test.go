package redisbackend_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Redis command time of a lock cycle (issue 25, DESIGN.md "What a cycle
// may cost"). TestScriptCost is skipped unless -scriptcost is given or
// SYNCGUARD_SCRIPTCOST=1 is set, so make test does not run it:
//
//	go test -run TestScriptCost -scriptcost -v ./redisbackend/
//	go test -run TestScriptCost -scriptcost -scriptcost.n 20000 -scriptcost.rounds 5 -v ./redisbackend/
//
// It starts its own redis-server (internal/testkit/redistest) and, from one
// goroutine, on a new key per cycle, with context.Background() and
// go-redis's default options, runs acquire+release cycles through
// redisbackend.Backend and through the spec's scripts, interleaved in
// rounds on the one server, and reports from INFO commandstats the Redis
// command time per cycle: of the scripts (EVALSHA, EVAL, FCALL) and of
// every command they ran.

var (
	scriptCostFlag      = flag.Bool("scriptcost", false, "run TestScriptCost (Redis command time per lock cycle)")
	scriptCostN         = flag.Int("scriptcost.n", 20000, "cycles per measurement in TestScriptCost")
	scriptCostRounds    = flag.Int("scriptcost.rounds", 3, "interleaved rounds in TestScriptCost")
	scriptCostCases     = flag.String("scriptcost.cases", "", "comma-separated cases of TestScriptCost (default all)")
	scriptCostInner     = flag.Bool("scriptcost.inner", false, "TestScriptCost also lists the commands the scripts ran")
	scriptCostCallgrind = flag.Bool("scriptcost.callgrind", false, "TestScriptCost runs redis-server under callgrind and counts instructions")
)

func scriptCostOn(t *testing.T) {
	t.Helper()
	if !*scriptCostFlag && os.Getenv("SYNCGUARD_SCRIPTCOST") != "1" {
		t.Skip("measurement: run with -scriptcost or SYNCGUARD_SCRIPTCOST=1")
	}
}

// specMinAcquire and specMinRelease do exactly what seed 000 requires of
// a lock cycle, in its script signatures, and nothing more: the floor of
// the wire format. The acquire reads the server's clock and the lock,
// answers contention for a live lock, bumps the fence and writes the lock
// JSON (cjson.encode, as the seed says) and the index with PX. The release
// reads the index and the lock, verifies ownership and deletes both keys;
// it skips the seed's TIME, which only tells "expired" (-2) from released
// for a lock key that is still there, which PX expiry makes never happen
// for data the scripts wrote.
const specMinAcquire = `
local t = redis.call('TIME')
local nowMs = t[1] * 1000 + math.floor(t[2] / 1000)
local existing = redis.call('GET', KEYS[1])
if existing then
  local data = cjson.decode(existing)
  if data.expiresAtMs > nowMs - tonumber(ARGV[3]) then return 0 end
end
local fence = string.format('%015d', redis.call('INCR', KEYS[3]))
local ttlMs = tonumber(ARGV[2])
local expiresAtMs = nowMs + ttlMs
local lockData = cjson.encode({lockId = ARGV[1], expiresAtMs = expiresAtMs, acquiredAtMs = nowMs, key = ARGV[5], fence = fence})
redis.call('SET', KEYS[1], lockData, 'PX', ttlMs)
redis.call('SET', KEYS[2], ARGV[4], 'PX', ttlMs)
return {1, fence, expiresAtMs}
`

const specMinRelease = `
local lockKey = redis.call('GET', KEYS[1])
if not lockKey then return -1 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end
local data = cjson.decode(lockData)
if data.lockId ~= ARGV[1] then return 0 end
redis.call('DEL', lockKey, KEYS[1])
return 1
`

// seedAcquire and seedRelease are seed 000's scripts as written (the
// TypeScript library's ACQUIRE_SCRIPT and RELEASE_SCRIPT).
const seedAcquire = `
local lockKey = KEYS[1]
local lockIdKey = KEYS[2]
local fenceKey = KEYS[3]
local lockId = ARGV[1]
local ttlMs = tonumber(ARGV[2])
local toleranceMs = tonumber(ARGV[3])
local storageKey = ARGV[4]
local userKey = ARGV[5]
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)
local existingData = redis.call('GET', lockKey)
if existingData then
  local data = cjson.decode(existingData)
  if data.expiresAtMs > (nowMs - toleranceMs) then
    return 0
  end
  if data.lockId then
    redis.call('DEL', lockIdKey)
  end
end
local fence = string.format("%015d", redis.call('INCR', fenceKey))
local expiresAtMs = nowMs + ttlMs
local lockData = cjson.encode({
  lockId=lockId,
  expiresAtMs=expiresAtMs,
  acquiredAtMs=nowMs,
  key=userKey,
  fence=fence
})
redis.call('SET', lockKey, lockData, 'PX', ttlMs)
redis.call('SET', lockIdKey, storageKey, 'PX', ttlMs)
return {1, fence, expiresAtMs}
`

const seedRelease = `
local lockIdKey = KEYS[1]
local lockId = ARGV[1]
local toleranceMs = tonumber(ARGV[2])
local ttlMs = tonumber(ARGV[3])
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)
local lockKey = redis.call('GET', lockIdKey)
if not lockKey then return -1 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end
local data = cjson.decode(lockData)
if data.expiresAtMs <= (nowMs - toleranceMs) then
  redis.call('DEL', lockKey, lockIdKey)
  return -2
end
if data.lockId ~= lockId then return 0 end
if not ttlMs then
  redis.call('DEL', lockKey, lockIdKey)
  return 1
end
return -9
`

// cmdStat is one line of INFO commandstats.
type cmdStat struct{ calls, usec int64 }

// costSnap is what one measurement reads from the server.
type costSnap struct {
	cmds map[string]cmdStat
	cpu  float64 // used_cpu_user + used_cpu_sys, seconds
}

func readCostSnap(t *testing.T, rdb *redis.Client) costSnap {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats", "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	s := costSnap{cmds: map[string]cmdStat{}}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"); ok {
			name, fields, _ := strings.Cut(rest, ":")
			var st cmdStat
			for _, f := range strings.Split(fields, ",") {
				k, v, _ := strings.Cut(f, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				switch k {
				case "calls":
					st.calls = n
				case "usec":
					st.usec = n
				}
			}
			s.cmds[name] = st
			continue
		}
		for _, k := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s.cpu += f
			}
		}
	}
	return s
}

// costDelta is a measurement: the commands run between two snapshots
// (less the INFO of the first), per cycle.
type costDelta struct {
	n      int
	cmds   map[string]cmdStat
	cpuSec float64
}

func diffCost(a, b costSnap, n int) costDelta {
	d := costDelta{n: n, cmds: map[string]cmdStat{}, cpuSec: b.cpu - a.cpu}
	for name, sb := range b.cmds {
		sa := a.cmds[name]
		if sb.calls == sa.calls {
			continue
		}
		d.cmds[name] = cmdStat{calls: sb.calls - sa.calls, usec: sb.usec - sa.usec}
	}
	if st, ok := d.cmds["info"]; ok {
		st.calls-- // the second snapshot's own INFO is not counted yet; the first's is
		if st.calls == 0 {
			delete(d.cmds, "info")
		} else {
			d.cmds["info"] = st
		}
	}
	return d
}

// scriptNames are the commands that run a script: their time includes
// the commands the script runs.
var scriptNames = []string{"evalsha", "eval", "fcall", "fcall_ro"}

// scriptUs is the script time per cycle.
func (d costDelta) scriptUs() float64 {
	var us int64
	for _, name := range scriptNames {
		us += d.cmds[name].usec
	}
	return float64(us) / float64(d.n)
}

func (d costDelta) cpuUs() float64 { return d.cpuSec * 1e6 / float64(d.n) }

// inner lists the commands the scripts ran, per cycle.
func (d costDelta) inner() string {
	var names []string
	for name := range d.cmds {
		if !slices.Contains(scriptNames, name) && name != "info" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var sb strings.Builder
	var us int64
	for _, name := range names {
		st := d.cmds[name]
		us += st.usec
		fmt.Fprintf(&sb, " %s %.2f/%.2fµs", name, float64(st.calls)/float64(d.n), float64(st.usec)/float64(d.n))
	}
	return fmt.Sprintf("inner %.2fµs:%s", float64(us)/float64(d.n), sb.String())
}

// costCase is one way of running lock cycles: acquire(i) then
// release(i, what acquire returned).
type costCase struct {
	name    string
	setup   func(t *testing.T, rdb *redis.Client)
	acquire func(t *testing.T, i int) string
	release func(t *testing.T, i int, id string)
}

// measureCycles runs n cycles of c (keys from base) and returns the
// commands they cost: the cycle (acquire then release, key after key),
// and apart, n acquisitions followed by their n releases.
func measureCycles(t *testing.T, rdb *redis.Client, c costCase, base, n int) (cycle, acq, rel costDelta) {
	t.Helper()
	s0 := readCostSnap(t, rdb)
	for i := range n {
		c.release(t, base+i, c.acquire(t, base+i))
	}
	s1 := readCostSnap(t, rdb)
	cycle = diffCost(s0, s1, n)

	ids := make([]string, n)
	base += n
	s0 = readCostSnap(t, rdb)
	for i := range n {
		ids[i] = c.acquire(t, base+i)
	}
	s1 = readCostSnap(t, rdb)
	for i := range n {
		c.release(t, base+i, ids[i])
	}
	s2 := readCostSnap(t, rdb)
	return cycle, diffCost(s0, s1, n), diffCost(s1, s2, n)
}

// backendCase runs cycles through a redisbackend.Backend.
func backendCase(name string, opts *redisbackend.Options) costCase {
	return backendCaseOf(name, opts, 0, false)
}

// backendCaseOf is backendCase for a slot of a limit of size limit (a key
// of its own, so uncontended) when limit > 0, and with functions off
// (every script by EVALSHA) when evalsha.
func backendCaseOf(name string, opts *redisbackend.Options, limit int, evalsha bool) costCase {
	var bk *redisbackend.Backend
	ctx := context.Background()
	return costCase{
		name: name,
		setup: func(t *testing.T, rdb *redis.Client) {
			var err error
			if bk, err = redisbackend.New(rdb, opts); err != nil {
				t.Fatal(err)
			}
			if evalsha {
				redisbackend.DisableFunctions(bk)
			}
		},
		acquire: func(t *testing.T, i int) string {
			l, err := acquireOrSlot(ctx, bk, "k"+strconv.Itoa(i), limit, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			return l.ID
		},
		release: func(t *testing.T, i int, id string) {
			if err := bk.Release(ctx, id); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// specCase runs cycles of a pair of scripts with seed 000's signatures
// (acquire: KEYS lock, index, fence; ARGV lockId, ttlMs, toleranceMs,
// storage key, user key; release: KEYS index; ARGV lockId, toleranceMs),
// by EVALSHA, on keys of the prefix name.
func specCase(name, acquireSrc, releaseSrc string) costCase {
	return specCaseBy(name, acquireSrc, releaseSrc, false)
}

// specCaseBy is specCase by EVALSHA or, with fcall, as the two functions
// of a library of their own (FUNCTION LOAD, then FCALL), as the Backend
// runs its own scripts on Redis 7 (functions.go).
func specCaseBy(name, acquireSrc, releaseSrc string, fcall bool) costCase {
	acq, rel := redis.NewScript(acquireSrc), redis.NewScript(releaseSrc)
	var rdb *redis.Client
	ctx := context.Background()
	tol := strconv.FormatInt(wire.TimeToleranceMs, 10)
	fnAcq, fnRel := name+"_acquire", name+"_release"
	run := func(s *redis.Script, fn string, keys []string, args ...any) *redis.Cmd {
		if fcall {
			return rdb.FCall(ctx, fn, keys, args...)
		}
		return s.EvalSha(ctx, rdb, keys, args...)
	}
	return costCase{
		name: name,
		setup: func(t *testing.T, c *redis.Client) {
			rdb = c
			if fcall {
				lib := "#!lua name=" + name + "\n" +
					"redis.register_function('" + fnAcq + "', function(KEYS, ARGV)\n" + acquireSrc + "\nend)\n" +
					"redis.register_function('" + fnRel + "', function(KEYS, ARGV)\n" + releaseSrc + "\nend)\n"
				if err := rdb.FunctionLoadReplace(ctx, lib).Err(); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, s := range []*redis.Script{acq, rel} {
				if err := s.Load(ctx, rdb).Err(); err != nil {
					t.Fatal(err)
				}
			}
		},
		acquire: func(t *testing.T, i int) string {
			key := "k" + strconv.Itoa(i)
			lockKey := name + ":" + key
			id := lockdriver.NewLockID()
			res, err := run(acq, fnAcq, []string{lockKey, name + ":id:" + id, name + ":fence:" + lockKey},
				id, "30000", tol, lockKey, key).Slice()
			if err != nil || len(res) != 3 || res[0] != int64(1) {
				t.Fatalf("%s acquire = %v, %v", name, res, err)
			}
			return id
		},
		release: func(t *testing.T, i int, id string) {
			n, err := run(rel, fnRel, []string{name + ":id:" + id}, id, tol).Int64()
			if err != nil || n != 1 {
				t.Fatalf("%s release = %v, %v", name, n, err)
			}
		},
	}
}

// TestScriptCost reports the Redis command time of a lock cycle, ours
// against the spec's, side by side on one server. With -scriptcost.callgrind
// the server runs under valgrind's callgrind, counting instructions only
// inside the script commands (EVALSHA, EVAL, FCALL): a count the load of
// the machine does not change.
func TestScriptCost(t *testing.T) {
	scriptCostOn(t)
	if *scriptCostCallgrind {
		scriptCostUnderCallgrind(t)
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var cases []costCase
	for _, c := range append([]costCase{
		backendCase("syncguard", nil),
		specCase("specmin", specMinAcquire, specMinRelease),
		specCaseBy("specmin_fcall", specMinAcquire, specMinRelease, true),
		specCase("seed", seedAcquire, seedRelease),
	}, extraCostCases...) {
		if *scriptCostCases == "" || slices.Contains(strings.Split(*scriptCostCases, ","), c.name) {
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		c.setup(t, rdb)
	}
	n := *scriptCostN
	if *scriptCostCallgrind {
		pid := rdb.InfoMap(context.Background(), "server").Item("Server", "process_id")
		for i, c := range cases {
			measureCycles(t, rdb, c, 1e8*(i+1), 200) // warm up
			callgrindDump(t, pid, "warmup")
			s0 := readCostSnap(t, rdb)
			for j := range n {
				c.release(t, 1e8*(i+1)+1e7+j, c.acquire(t, 1e8*(i+1)+1e7+j))
			}
			cy := callgrindDump(t, pid, c.name+"-cycle")
			s1 := readCostSnap(t, rdb)
			ids := make([]string, n)
			for j := range n {
				ids[j] = c.acquire(t, 1e8*(i+1)+2e7+j)
			}
			acq := callgrindDump(t, pid, c.name+"-acquire")
			for j := range n {
				c.release(t, 1e8*(i+1)+2e7+j, ids[j])
			}
			rel := callgrindDump(t, pid, c.name+"-release")
			t.Logf("%-18s instructions in script commands per cycle: %8.0f (acquire %8.0f, release %8.0f)",
				c.name, float64(cy)/float64(n), float64(acq)/float64(n), float64(rel)/float64(n))
			t.Logf("%-18s   cycle %s", "", diffCost(s0, s1, n).inner())
		}
		return
	}
	// Warm up: the first cycles pay for connections, script loads and
	// the server's allocations.
	for i, c := range cases {
		measureCycles(t, rdb, c, 1e8*(i+1), 2000)
	}
	type result struct{ cycle, acq, rel costDelta }
	results := make([][]result, len(cases))
	for r := range *scriptCostRounds {
		for i, c := range cases {
			cy, a, rl := measureCycles(t, rdb, c, 1e8*(i+1)+(r+1)*1e7, n)
			results[i] = append(results[i], result{cy, a, rl})
		}
	}
	ref := 0
	for i, c := range cases {
		if c.name == "specmin" {
			ref = i
		}
	}
	for r := range *scriptCostRounds {
		t.Logf("round %d (%d cycles each; script µs of Redis command time per cycle; ratio to %s's cycle in this round)", r+1, n, cases[ref].name)
		refUs := results[ref][r].cycle.scriptUs()
		for i, c := range cases {
			res := results[i][r]
			t.Logf("  %-18s cycle %6.2fµs (%.2fx) | acquire %5.2fµs release %5.2fµs | Redis CPU/cycle %5.2fµs",
				c.name, res.cycle.scriptUs(), res.cycle.scriptUs()/refUs, res.acq.scriptUs(), res.rel.scriptUs(), res.cycle.cpuUs())
			if *scriptCostInner {
				t.Logf("  %-18s   cycle %s", "", res.cycle.inner())
				t.Logf("  %-18s   acquire %s", "", res.acq.inner())
				t.Logf("  %-18s   release %s", "", res.rel.inner())
			}
		}
	}
	t.Logf("medians over %d rounds (ratio: median of the per-round ratios)", *scriptCostRounds)
	for i, c := range cases {
		var cy, a, rl, ratio []float64
		for r, res := range results[i] {
			cy = append(cy, res.cycle.scriptUs())
			a = append(a, res.acq.scriptUs())
			rl = append(rl, res.rel.scriptUs())
			ratio = append(ratio, res.cycle.scriptUs()/results[ref][r].cycle.scriptUs())
		}
		t.Logf("  %-18s cycle %6.2fµs (%.2fx) | acquire %5.2fµs release %5.2fµs", c.name, median(cy), median(ratio), median(a), median(rl))
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// scriptCostUnderCallgrind makes redistest start redis-server under
// callgrind, collecting only inside the script commands.
func scriptCostUnderCallgrind(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server")
	}
	dir := t.TempDir()
	if d := os.Getenv("SCRIPTCOST_CALLGRIND_DIR"); d != "" {
		dir = d // keep the dumps, for callgrind_annotate
	}
	wrapper := "#!/bin/sh\nexec valgrind --tool=callgrind --collect-atstart=no" +
		" --toggle-collect=evalShaCommand --toggle-collect=evalCommand --toggle-collect=fcallCommand" +
		" --callgrind-out-file=" + dir + "/callgrind.out " + bin + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "redis-server"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	callgrindDir = dir
}

var callgrindDir string

// callgrindDump asks callgrind in process pid to dump its counts (which
// it then zeroes) and returns the instructions counted since the last dump.
func callgrindDump(t *testing.T, pid, label string) int64 {
	t.Helper()
	if out, err := exec.Command("callgrind_control", "--dump="+label, pid).CombinedOutput(); err != nil {
		t.Fatalf("callgrind_control: %v: %s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(callgrindDir, "callgrind.out.*"))
	var newest string
	var newestN int
	for _, f := range files {
		n, err := strconv.Atoi(f[strings.LastIndexByte(f, '.')+1:])
		if err == nil && n > newestN {
			newest, newestN = f, n
		}
	}
	raw, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "desc: Trigger: Client Request: "+label) && !strings.Contains(string(raw), label) {
		t.Fatalf("newest dump %s is not %s", newest, label)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "totals: "); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	t.Fatalf("no totals in %s", newest)
	return 0
}

// extraCostCases are added by experiments (scriptcost_*_test.go).
var extraCostCases []costCase
