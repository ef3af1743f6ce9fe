package redisbackend_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
)

// costPart is one script run n times by TestScriptCostParts.
type costPart struct {
	name string
	src  string // a script body; "fcall:<name>" calls function <name> of the scriptcost library
	keys []string
	args []any
}

const partJSON = `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1764100000000,"acquiredAtMs":1764099970000,"key":"k123456","fence":"000000000000001"}`

// preludeForParts is prelude.lua as the scripts get it.
func preludeForParts(t *testing.T) string {
	raw, err := os.ReadFile("scripts/prelude.lua")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

var acqKeys = []string{"pk:lock", "pk:id:AbCdEfGhIjKlMnOpQrStUv", "pk:fence:pk:lock"}
var acqArgs = []any{"AbCdEfGhIjKlMnOpQrStUv", "30000", "1000", "k123456", "900000000000000", "0"}

func costParts(t *testing.T) []costPart {
	prelude := preludeForParts(t)
	one := []string{"pk:json"}
	return []costPart{
		{name: "empty 0 keys 0 args", src: "return 1"},
		{name: "empty 3 keys 6 args", src: "return 1", keys: acqKeys, args: acqArgs},
		{name: "empty 1 key 8 args", src: "return 1", keys: one, args: []any{"AbCdEfGhIjKlMnOpQrStUv", "1000", "syncguard:queue:", "15000", "abcdefgh1", "900000000000000", "r", "syncguard:waiter:abcdefghijkl"}},
		{name: "empty 1 key 3 args", src: "return 1", keys: one, args: []any{"AbCdEfGhIjKlMnOpQrStUv", "15000", "abcdefgh1"}},
		{name: "prelude 3 keys 6 args", src: prelude + "return 1", keys: acqKeys, args: acqArgs},
		{name: "fcall nop 3 keys 6 args", src: "fcall:nop", keys: acqKeys, args: acqArgs},
		{name: "fcall nop 0 keys 0 args", src: "fcall:nop"},
		{name: "TIME", src: "redis.call('TIME') return 1"},
		{name: "TIME + nowMs", src: "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) return 1"},
		{name: "GET missing", src: "redis.call('GET', KEYS[1]) return 1", keys: []string{"pk:missing"}},
		{name: "GET json", src: "redis.call('GET', KEYS[1]) return 1", keys: one},
		{name: "pcall GET json", src: "redis.pcall('GET', KEYS[1]) return 1", keys: one},
		{name: "typed GET json", src: prelude + "lib().typed('GET', KEYS[1]) return 1", keys: one},
		{name: "SET json PX str", src: "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1", keys: []string{"pk:set"}, args: []any{partJSON, "30000"}},
		{name: "SET json PX num", src: "redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2])) return 1", keys: []string{"pk:set"}, args: []any{partJSON, "30000"}},
		{name: "SET NX PX (exists)", src: "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) return 1", keys: one, args: []any{"x", "30000"}},
		{name: "INCR", src: "redis.call('INCR', KEYS[1]) return 1", keys: []string{"pk:incr"}},
		{name: "ZPOPMIN missing", src: "redis.call('ZPOPMIN', KEYS[1]) return 1", keys: []string{"pk:missing"}},
		{name: "EXISTS missing", src: "redis.call('EXISTS', KEYS[1]) return 1", keys: []string{"pk:missing"}},
		{name: "DEL missing", src: "redis.call('DEL', KEYS[1]) return 1", keys: []string{"pk:missing"}},
		{name: "cjson.decode", src: "local d = cjson.decode(ARGV[1]) return 1", args: []any{partJSON}},
		{name: "cjson.decode .lockId==", src: "local d = cjson.decode(ARGV[1]) if d.lockId == ARGV[2] then return 1 end return 0", args: []any{partJSON, "AbCdEfGhIjKlMnOpQrStUv"}},
		{name: "find lockId", src: "if string.find(ARGV[1], '\"lockId\":\"' .. ARGV[2] .. '\"', 1, true) then return 1 end return 0", args: []any{partJSON, "AbCdEfGhIjKlMnOpQrStUv"}},
		{name: "match expiresAtMs", src: "local e = tonumber(string.match(ARGV[1], '\"expiresAtMs\":(%d+)')) return 1", args: []any{partJSON}},
		{name: "cjson.encode table", src: "local s = cjson.encode({lockId = ARGV[1], expiresAtMs = 1764100000000, acquiredAtMs = 1764099970000, key = ARGV[2], fence = '000000000000001'}) return 1", args: []any{"AbCdEfGhIjKlMnOpQrStUv", "k123456"}},
		{name: "lockFormat", src: prelude + "local s = string.format(lockFormat, ARGV[1], 1764100000000, 1764099970000, ARGV[2], 1) return 1", args: []any{"AbCdEfGhIjKlMnOpQrStUv", "k123456"}},
		{name: "concat pre-escaped key", src: "local now = 1764099970000 local s = '{\"lockId\":\"' .. ARGV[1] .. '\",\"expiresAtMs\":' .. (now + 30000) .. ',\"acquiredAtMs\":' .. now .. ',\"key\":' .. ARGV[2] .. ',\"fence\":\"' .. '000000000000001' .. '\"}' return 1", args: []any{"AbCdEfGhIjKlMnOpQrStUv", `"k123456"`}},
		{name: "cjson.encode key", src: "local s = cjson.encode(ARGV[1]) return 1", args: []any{"k123456"}},
		{name: "format %015d", src: "local s = string.format('%015d', 123) return 1"},
		{name: "return {1,fence,exp}", src: "return {1, '000000000000001', 1764100000000}"},
		{name: "return {1,n,exp} nums", src: "return {1, 123, 1764100000000}"},
		{name: "return exp", src: "return 1764100000000"},
		{name: "return {1}", src: "return {1}"},
		{name: "SET tomb PX", src: "redis.call('SET', KEYS[1], '\\0001:abcdefgh12', 'PX', ARGV[1]) return 1", keys: []string{"pk:tomb"}, args: []any{"15000"}},
		{name: "SET tomb KEEPTTL", src: "redis.call('SET', KEYS[1], '\\0001:abcdefgh12', 'KEEPTTL') return 1", keys: []string{"pk:tomb"}},
		{name: "SET tomb plain", src: "redis.call('SET', KEYS[1], '\\0001:abcdefgh12') return 1", keys: []string{"pk:tomb"}},
		{name: "APPEND+DEL", src: "redis.call('APPEND', KEYS[1], ' ') redis.call('DEL', KEYS[1]) return 1", keys: []string{"pk:app"}},
		{name: "DEL only", src: "redis.call('DEL', KEYS[1]) return 1", keys: []string{"pk:app"}},
		{name: "byte(-1) check", src: "if string.byte(ARGV[1], -1) == 32 then return 0 end return 1", args: []any{partJSON}},
		{name: "SET NX GET PX (missing)", src: "redis.call('DEL', KEYS[1]) redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET', 'PX', ARGV[2]) return 1", keys: []string{"pk:nxget"}, args: []any{partJSON, "30000"}},
		{name: "SET NX GET PX (exists)", src: "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET', 'PX', ARGV[2]) return 1", keys: one, args: []any{"x", "30000"}},
		{name: "SET GET PX", src: "redis.call('SET', KEYS[1], '\\0001:abcdefgh12', 'GET', 'PX', ARGV[1]) return 1", keys: []string{"pk:tomb"}, args: []any{"15000"}},
		{name: "TIME + nowStr", src: "local t = redis.call('TIME') local s = t[1] .. string.sub('00000' .. t[2], -6, -4) local now = tonumber(s) return 1"},
		{name: "format %d 13 digits", src: "local s = string.format('%d', 1764099970000 + 30000) return 1"},
		{name: "tostring 13 digits", src: "local s = '' .. (1764099970000 + 30000) return 1"},
		{name: "closure", src: "local function f() return 1 end return 1"},
		{name: "match exp+fence", src: "local e, f = string.match(ARGV[1], '\"expiresAtMs\":(%d+)'), string.match(ARGV[1], '\"fence\":\"(%d+)\"') return 1", args: []any{partJSON}},
		{name: "concat lock data", src: "local now, ttl = '1764099970000', '30000' local s = '{\"lockId\":\"' .. ARGV[1] .. '\",\"expiresAtMs\":' .. string.format('%d', now + ttl) .. ',\"acquiredAtMs\":' .. now .. ',\"key\":\"' .. ARGV[2] .. '\",\"fence\":\"' .. string.format('%015d', 7) .. '\"}' return 1", args: []any{"AbCdEfGhIjKlMnOpQrStUv", "k123456"}},
		{name: "local call = redis.call x4", src: "local call = redis.call call('TIME') call('TIME') call('TIME') call('TIME') return 1"},
		{name: "redis.call x4", src: "redis.call('TIME') redis.call('TIME') redis.call('TIME') redis.call('TIME') return 1"},
		{name: "SET json PXAT str", src: "redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2]) return 1", keys: []string{"pk:set"}, args: []any{partJSON, "4102444800000"}},
		{name: "SET tomb PXAT str", src: "redis.call('SET', KEYS[1], '\\0001:abcdefgh12', 'PXAT', ARGV[1]) return 1", keys: []string{"pk:tomb"}, args: []any{"4102444800000"}},
		{name: "SET NX GET PXAT (missing)", src: "redis.call('DEL', KEYS[1]) redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET', 'PXAT', ARGV[2]) return 1", keys: []string{"pk:nxget"}, args: []any{partJSON, "4102444800000"}},
		{name: "tonumber x3", src: "local a, b, c = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]) return 1", args: []any{"30000", "1000", "15000"}},
	}
}

// scriptcostLibrary is a function library for the fcall parts.
const scriptcostLibrary = `#!lua name=scriptcost
redis.register_function('nop', function(keys, args) return 1 end)
`

// TestScriptCostParts measures the parts a script is built from: each
// part is a script run n times by EVALSHA (or FCALL), and its cost is the
// script time per run (with -scriptcost.callgrind: instructions per run).
func TestScriptCostParts(t *testing.T) {
	scriptCostOn(t)
	if *scriptCostCallgrind {
		scriptCostUnderCallgrind(t)
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	rdb.Set(ctx, "pk:json", partJSON, 0)
	if err := rdb.FunctionLoadReplace(ctx, scriptcostLibrary).Err(); err != nil {
		t.Logf("FUNCTION LOAD: %v (fcall parts skipped)", err)
	}
	pid := rdb.InfoMap(ctx, "server").Item("Server", "process_id")
	n := *scriptCostN
	parts := costParts(t)
	type res struct {
		name string
		v    []float64
	}
	var results []res
	for round := range *scriptCostRounds {
		for i, p := range parts {
			if *scriptCostCases != "" && !strings.Contains(p.name, *scriptCostCases) {
				continue
			}
			run := func() {}
			if fn, ok := strings.CutPrefix(p.src, "fcall:"); ok {
				run = func() {
					if err := rdb.FCall(ctx, fn, p.keys, p.args...).Err(); err != nil && err != redis.Nil {
						t.Fatalf("%s: %v", p.name, err)
					}
				}
			} else {
				s := redis.NewScript(p.src)
				if err := s.Load(ctx, rdb).Err(); err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				run = func() {
					if err := s.EvalSha(ctx, rdb, p.keys, p.args...).Err(); err != nil && err != redis.Nil {
						t.Fatalf("%s: %v", p.name, err)
					}
				}
			}
			for range 100 {
				run()
			}
			var v float64
			if *scriptCostCallgrind {
				callgrindDump(t, pid, "warmup")
				for range n {
					run()
				}
				v = float64(callgrindDump(t, pid, "part")) / float64(n)
			} else {
				s0 := readCostSnap(t, rdb)
				for range n {
					run()
				}
				s1 := readCostSnap(t, rdb)
				v = diffCost(s0, s1, n).scriptUs()
			}
			if round == 0 {
				results = append(results, res{name: p.name})
			}
			for j := range results {
				if results[j].name == parts[i].name {
					results[j].v = append(results[j].v, v)
				}
			}
		}
	}
	unit := "µs"
	if *scriptCostCallgrind {
		unit = "instructions"
	}
	for _, r := range results {
		t.Logf("%-26s %10.2f %s per run (median of %v)", r.name, median(r.v), unit, r.v)
	}
}
