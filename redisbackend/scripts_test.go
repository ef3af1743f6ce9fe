package redisbackend

import (
	"strings"
	"testing"
)

// TestScriptsShareThePrelude: every script is sent with prelude.lua's
// constants in front and its helpers expanded where called, and no script
// body carries its own copy of what the prelude defines (server time,
// lock-data decoding, the tombstone format).
func TestScriptsShareThePrelude(t *testing.T) {
	for _, tc := range []struct {
		desc string
		s    *script
		body string
	}{
		{desc: "acquire", s: acquireScript, body: acquireSrc},
		{desc: "release", s: releaseScript, body: releaseSrc},
		{desc: "extend", s: extendScript, body: extendSrc},
		{desc: "lookup_id", s: lookupIDScript, body: lookupIDSrc},
		{desc: "lookup_key", s: lookupKeyScript, body: lookupKeySrc},
		{desc: "is_locked", s: isLockedScript, body: isLockedSrc},
		{desc: "is_done", s: isDoneScript, body: isDoneSrc},
	} {
		src, _ := tc.s.srcArg.(string)
		if src != preludeConsts+expandHelpers(tc.body) {
			t.Errorf("%s: sent source is not prelude.lua's constants followed by the expanded script", tc.desc)
		}
		for _, copied := range []string{"redis.call('TIME')", "cjson.decode", "SYNCGUARD_CORRUPT", "'\\0"} {
			if strings.Contains(tc.body, copied) {
				t.Errorf("%s.lua contains %q: use the prelude's helper", tc.desc, copied)
			}
		}
	}
}

// TestPreludeHelpers: prelude.lua's helpers are found, none is left as a
// local function in what is sent (each would be a closure made on every
// run), and a call is expanded only in code: not in a comment, not as a
// field of another table.
func TestPreludeHelpers(t *testing.T) {
	for _, name := range []string{"serverMs", "decodeLock", "tombstone", "lib"} {
		if _, ok := preludeHelpers[name]; !ok {
			t.Errorf("helper %s not found in prelude.lua", name)
		}
	}
	if helperStart.MatchString(preludeConsts) || strings.Contains(preludeConsts, "\nlocal function") {
		t.Error("a local function is left in the prelude's constants")
	}
	for _, s := range []*script{acquireScript, releaseScript, extendScript, lookupIDScript, lookupKeyScript,
		isLockedScript, isDoneScript, getRecordScript, acquireSlotScript, lookupLimitScript} {
		if src := s.srcArg.(string); strings.Contains(src, "\nlocal function") {
			t.Errorf("a sent script defines a local function:\n%s", src)
		}
	}
	got := expandHelpers("local a = tombstone('1', n) -- tombstone(x)\nlocal b = L.tombstone(c)\n")
	want := "local a = (function(result, nonce)\n" + preludeHelpers["tombstone"].body + "\nend)('1', n) -- tombstone(x)\nlocal b = L.tombstone(c)\n"
	if got != want {
		t.Errorf("expandHelpers =\n%s\nwant\n%s", got, want)
	}
	if src := isDoneScript.srcArg.(string); src != preludeConsts+isDoneSrc {
		t.Error("is_done.lua calls no helper but is sent changed")
	}
}
