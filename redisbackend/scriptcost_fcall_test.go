package redisbackend_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Two more cases for TestScriptCost, with the Backend's arguments for a
// key nobody waits on: the lock's acquire and release scripts by EVALSHA
// ("ours-evalsha": prelude.lua as written, then the body, as a server
// without functions runs them but for the prelude's helpers, which the
// Backend expands where they are called), and as Redis 7 functions built
// here ("ours-fcall": one FUNCTION LOAD of prelude.lua and both bodies,
// then FCALL, as functions.go does).
func init() {
	extraCostCases = append(extraCostCases, ourScriptsCase("ours-evalsha", false), ourScriptsCase("ours-fcall", true))
}

func ourScriptsCase(name string, fcall bool) costCase {
	var rdb *redis.Client
	var acq, rel *redis.Script
	var fnAcq, fnRel string
	ctx := context.Background()
	read := func(t *testing.T, f string) string {
		raw, err := os.ReadFile("scripts/" + f)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	var nonce int
	return costCase{
		name: name,
		setup: func(t *testing.T, c *redis.Client) {
			rdb = c
			prelude, acqBody, relBody := read(t, "prelude.lua"), read(t, "acquire.lua"), read(t, "release.lua")
			if !fcall {
				acq, rel = redis.NewScript(prelude+acqBody), redis.NewScript(prelude+relBody)
				for _, s := range []*redis.Script{acq, rel} {
					if err := s.Load(ctx, rdb).Err(); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			sum := sha1.Sum([]byte(prelude + acqBody + relBody))
			tag := hex.EncodeToString(sum[:6])
			fnAcq, fnRel = "sgcost_acquire_"+tag, "sgcost_release_"+tag
			lib := "#!lua name=sgcost_" + tag + "\n" + prelude +
				"\nredis.register_function('" + fnAcq + "', function(KEYS, ARGV)\n" + acqBody + "\nend)\n" +
				"redis.register_function('" + fnRel + "', function(KEYS, ARGV)\n" + relBody + "\nend)\n"
			if err := rdb.FunctionLoadReplace(ctx, lib).Err(); err != nil {
				t.Fatal(err)
			}
		},
		acquire: func(t *testing.T, i int) string {
			key := "k" + strconv.Itoa(i)
			lockKey := name + ":" + key
			id := lockdriver.NewLockID()
			keys := []string{lockKey, name + ":id:" + id, name + ":fence:" + lockKey}
			var res any
			var err error
			if fcall {
				res, err = rdb.FCall(ctx, fnAcq, keys, id, 30000, key).Result()
			} else {
				res, err = acq.EvalSha(ctx, rdb, keys, id, 30000, key).Result()
			}
			if data, ok := res.(string); err != nil || !ok || !strings.Contains(data, id) { // a grant is its lock data
				t.Fatalf("%s acquire = %v, %v", name, res, err)
			}
			return id
		},
		release: func(t *testing.T, i int, id string) {
			nonce++
			keys := []string{name + ":id:" + id}
			args := []any{id, 15000, "abcdefgh" + strconv.Itoa(nonce), name + ":queue:", name + ":waiter:abcdefghijklmnop"}
			var n int64
			var err error
			if fcall {
				n, err = rdb.FCall(ctx, fnRel, keys, args...).Int64()
			} else {
				n, err = rel.EvalSha(ctx, rdb, keys, args...).Int64()
			}
			if err != nil || n != 1 {
				t.Fatalf("%s release = %v, %v", name, n, err)
			}
		},
	}
}

// With SCRIPTCOST_BEFORE_DIR set to a copy of scripts/ as it was at an
// earlier commit (before issue 25, or since), TestScriptCost also runs
// those scripts ("before"), with the arguments the Backend sent them then.
func init() {
	dir := os.Getenv("SCRIPTCOST_BEFORE_DIR")
	if dir == "" {
		return
	}
	var rdb *redis.Client
	var acq, rel *redis.Script
	ctx := context.Background()
	var nonce int
	// short: the scripts take the Backend's short argument layouts (ours
	// since the first change of issue 25), which the Backend then sent.
	var short bool
	extraCostCases = append(extraCostCases, costCase{
		name: "before",
		setup: func(t *testing.T, c *redis.Client) {
			rdb = c
			read := func(f string) string {
				raw, err := os.ReadFile(dir + "/" + f)
				if err != nil {
					t.Fatal(err)
				}
				return string(raw)
			}
			acq, rel = redis.NewScript(read("prelude.lua")+read("acquire.lua")), redis.NewScript(read("prelude.lua")+read("release.lua"))
			short = strings.Contains(read("release.lua"), "Release's (release.go")
			for _, s := range []*redis.Script{acq, rel} {
				if err := s.Load(ctx, rdb).Err(); err != nil {
					t.Fatal(err)
				}
			}
		},
		acquire: func(t *testing.T, i int) string {
			key := "k" + strconv.Itoa(i)
			lockKey := "before:" + key
			id := lockdriver.NewLockID()
			args := []any{id, 30000, "1000", key, "900000000000000", "0"}
			if short {
				args = []any{id, "30000", key}
			}
			res, err := acq.EvalSha(ctx, rdb, []string{lockKey, "before:id:" + id, "before:fence:" + lockKey}, args...).Result()
			// A grant is {1, fence, expiresAtMs} before issue 25's
			// changes, the lease's lock data after them.
			switch r := res.(type) {
			case []any:
				if err == nil && len(r) == 3 && r[0] == int64(1) {
					return id
				}
			case string:
				if err == nil && strings.Contains(r, `"lockId":"`+id+`"`) {
					return id
				}
			}
			t.Fatalf("before acquire = %v, %v", res, err)
			return ""
		},
		release: func(t *testing.T, i int, id string) {
			nonce++
			args := []any{id, "1000", "before:queue:", 15000, "abcdefgh" + strconv.Itoa(nonce), "900000000000000", "r", "before:waiter:abcdefghijklmnop"}
			if short {
				args = []any{id, 15000, "abcdefgh" + strconv.Itoa(nonce), "before:queue:", "before:waiter:abcdefghijklmnop"}
			}
			n, err := rel.EvalSha(ctx, rdb, []string{"before:id:" + id}, args...).Int64()
			if err != nil || n != 1 {
				t.Fatalf("before release = %v, %v", n, err)
			}
		},
	})
}
