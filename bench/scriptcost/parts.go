package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redis/go-redis/v9"
)

// part is one script run n times by runParts.
type part struct {
	name string
	src  string
	keys []string
	args []any
}

const partJSON = `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1764100000000,"acquiredAtMs":1764099970000,"key":"k123456","fence":"000000000000001"}`

// lockFormat is redisbackend's lock-data format (scripts/prelude.lua).
const lockFormat = `'{"lockId":"%s","expiresAtMs":%d,"acquiredAtMs":%d,"key":"%s","fence":"%015d"}'`

var (
	acqKeys = []string{"pk:lock", "pk:id:AbCdEfGhIjKlMnOpQrStUv", "pk:fence:pk:lock"}
	acqArgs = []any{"AbCdEfGhIjKlMnOpQrStUv", "30000", "k123456"}
	one     = []string{"pk:json"}
	id2     = []any{partJSON, "AbCdEfGhIjKlMnOpQrStUv"}
)

// parts are the pieces scripts are made of: the cost of a call itself, of
// its arguments, of commands and of the Lua that builds and reads the lock
// data.
var parts = []part{
	{name: "empty 0 keys 0 args", src: "return 1"},
	{name: "empty 3 keys 3 args", src: "return 1", keys: acqKeys, args: acqArgs},
	{name: "empty 1 key 4 args", src: "return 1", keys: one, args: []any{"AbCdEfGhIjKlMnOpQrStUv", "15000", "abcdefgh1", "syncguard:queue:"}},
	{name: "local function x1", src: "local function f() return 1 end return 1"},
	{name: "local function x4", src: "local function a() end local function b() end local function c() end local function d() end return 1"},
	{name: "local constants x7", src: "local a, b, c, d, e, f, g = 1000, 900000000000000, " + lockFormat + ", ' ', 0, 1, 'SYNCGUARD_KIND x' return 1"},
	{name: "TIME + nowMs", src: "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) return 1"},
	{name: "GET missing", src: "redis.call('GET', KEYS[1]) return 1", keys: []string{"pk:missing"}},
	{name: "GET json", src: "redis.call('GET', KEYS[1]) return 1", keys: one},
	{name: "pcall GET json", src: "redis.pcall('GET', KEYS[1]) return 1", keys: one},
	{name: "SET json PX str", src: "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1", keys: []string{"pk:set"}, args: []any{partJSON, "30000"}},
	{name: "SET json PX num", src: "redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2])) return 1", keys: []string{"pk:set"}, args: []any{partJSON, "30000"}},
	{name: "SET NX PX (exists)", src: "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) return 1", keys: one, args: []any{"x", "30000"}},
	{name: "SET GET PX", src: "redis.call('SET', KEYS[1], '\\0001:abcdefgh12', 'GET', 'PX', ARGV[1]) return 1", keys: []string{"pk:tomb"}, args: []any{"15000"}},
	{name: "INCR", src: "redis.call('INCR', KEYS[1]) return 1", keys: []string{"pk:incr"}},
	{name: "DEL missing", src: "redis.call('DEL', KEYS[1]) return 1", keys: []string{"pk:missing"}},
	{name: "cjson.decode", src: "local d = cjson.decode(ARGV[1]) return 1", args: []any{partJSON}},
	{name: "find lockId", src: "if string.find(ARGV[1], '\"lockId\":\"' .. ARGV[2] .. '\"', 1, true) then return 1 end return 0", args: id2},
	{name: "cjson.encode table", src: "local s = cjson.encode({lockId = ARGV[1], expiresAtMs = 1764100000000, acquiredAtMs = 1764099970000, key = ARGV[2], fence = '000000000000001'}) return 1", args: []any{"AbCdEfGhIjKlMnOpQrStUv", "k123456"}},
	{name: "lockFormat", src: "local s = string.format(" + lockFormat + ", ARGV[1], 1764100000000, 1764099970000, ARGV[2], 1) return 1", args: []any{"AbCdEfGhIjKlMnOpQrStUv", "k123456"}},
	{name: "return {1,fence,exp}", src: "return {1, '000000000000001', 1764100000000}"},
	{name: "return lock data", src: "return ARGV[1]", args: []any{partJSON}},
}

// runParts measures each part c selects (a part whose name contains one
// of c.cases): its script run n times by EVALSHA, reported as script time
// per run (with callgrind: instructions per run), the median of the
// rounds.
func runParts(c config) error {
	s, err := start(c)
	if err != nil {
		return err
	}
	defer s.close()
	ctx := context.Background()
	if err := s.rdb.Set(ctx, "pk:json", partJSON, 0).Err(); err != nil {
		return err
	}
	unit := "µs"
	if c.callgrind {
		unit = "instructions"
	}
	for _, p := range append(parts, fileParts(c.scripts)...) {
		if !partSelected(c, p.name) {
			continue
		}
		var v []float64
		for range c.rounds {
			x, err := measurePart(c, s, p)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			v = append(v, x)
		}
		fmt.Printf("%-24s %10.2f %s per run (median of %d rounds)\n", p.name, median(v), unit, c.rounds)
	}
	return nil
}

// fileParts are the files every script of redisbackend starts with, run
// alone: what they cost a script before its own code runs.
func fileParts(dir string) []part {
	read := func(name string) string {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return ""
		}
		return string(raw)
	}
	prelude, lib := read("prelude.lua"), read("lib.lua")
	if prelude == "" || lib == "" {
		return nil
	}
	return []part{
		{name: "prelude.lua", src: prelude + "return 1"},
		{name: "prelude.lua + lib.lua", src: prelude + lib + "return 1"},
		{name: "prelude.lua + lib()", src: prelude + lib + "lib() return 1"},
	}
}

func partSelected(c config, name string) bool {
	if len(c.cases) == 0 {
		return true
	}
	for _, sub := range c.cases {
		if strings.Contains(name, sub) {
			return true
		}
	}
	return false
}

// measurePart runs p n times after 100 runs of warm-up and returns its
// cost per run.
func measurePart(c config, s *server, p part) (float64, error) {
	ctx := context.Background()
	sc := redis.NewScript(p.src)
	if err := sc.Load(ctx, s.rdb).Err(); err != nil {
		return 0, err
	}
	run := func(n int) error {
		for range n {
			if err := sc.EvalSha(ctx, s.rdb, p.keys, p.args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
		}
		return nil
	}
	if err := run(100); err != nil {
		return 0, err
	}
	if c.callgrind {
		if _, err := s.dump("warmup"); err != nil {
			return 0, err
		}
		if err := run(c.n); err != nil {
			return 0, err
		}
		n, err := s.dump("part")
		return float64(n) / float64(c.n), err
	}
	s0, err := readSnapshot(s.rdb)
	if err != nil {
		return 0, err
	}
	if err := run(c.n); err != nil {
		return 0, err
	}
	s1, err := readSnapshot(s.rdb)
	if err != nil {
		return 0, err
	}
	return diff(s0, s1, c.n).scriptUs(), nil
}
