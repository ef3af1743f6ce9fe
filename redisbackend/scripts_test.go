package redisbackend

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// preludeLua is scripts/prelude.lua.
func preludeLua(t *testing.T) string {
	t.Helper()
	raw, err := scriptFiles.ReadFile("scripts/prelude.lua")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// allScripts are the scripts the Backend sends, by name.
var allScripts = map[string]*script{
	"acquire": acquireScript, "acquire_slot": acquireSlotScript,
	"release": releaseScript, "release_cluster": releaseClusterScript,
	"release_mark": releaseMarkScript, "release_leave": releaseLeaveScript,
	"extend": extendScript, "lookup_id": lookupIDScript, "lookup_key": lookupKeyScript,
	"is_locked": isLockedScript, "lookup_limit": lookupLimitScript,
	"is_done": isDoneScript, "get_record": getRecordScript,
	"proclaim": proclaimScript, "acquire_mark": acquireMarkScript,
	"acquire_rw": acquireRWScript, "lookup_rw": lookupRWScript,
}

// TestScriptFiles: every Lua file is short, every script but the
// one-command reads starts with prelude.lua (acquire_mark.lua's answer
// comes before it), and no file but the prelude carries its own copy of what
// the prelude defines (server time, lock-data decoding, the tombstone
// format).
func TestScriptFiles(t *testing.T) {
	files, err := fs.Glob(scriptFiles, "scripts/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("scripts: %v, %v", files, err)
	}
	for _, f := range files {
		raw, _ := scriptFiles.ReadFile(f)
		if n := strings.Count(string(raw), "\n"); n > 120 {
			t.Errorf("%s: %d lines, want at most 120", f, n)
		}
		if f == "scripts/prelude.lua" {
			continue
		}
		for _, copied := range []string{"redis.call('TIME')", "cjson.decode", "SYNCGUARD_CORRUPT", "'\\0"} {
			if strings.Contains(string(raw), copied) {
				t.Errorf("%s contains %q: use the prelude's helper", f, copied)
			}
		}
	}
	prelude := preludeLua(t)
	mark, _ := scriptFiles.ReadFile("scripts/acquire_mark.lua")
	for name, s := range allScripts {
		src := s.srcArg.(string)
		switch name {
		case "is_done", "get_record":
			continue
		case "acquire_mark":
			// Its answer from the mark comes before the prelude runs.
			src = strings.TrimPrefix(src, string(mark))
		}
		if !strings.HasPrefix(src, prelude) {
			t.Errorf("%s: the sent source does not start with prelude.lua", name)
		}
	}
}

// TestScriptsLoad: Redis compiles every script, and the hash the Backend
// sends by EVALSHA is the one SCRIPT LOAD answers for its text.
func TestScriptsLoad(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	for name, s := range allScripts {
		sha, err := rdb.ScriptLoad(ctx, s.srcArg.(string)).Result()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if sha != s.hashArg {
			t.Errorf("%s: SCRIPT LOAD hash %s, EVALSHA sends %v", name, sha, s.hashArg)
		}
	}
}
