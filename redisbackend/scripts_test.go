package redisbackend

import (
	"strings"
	"testing"
)

// TestScriptsShareThePrelude: every script is sent with prelude.lua in
// front, and no script body carries its own copy of what the prelude
// defines (server time, lock-data decoding, the tombstone format).
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
		if src != preludeSrc+tc.body {
			t.Errorf("%s: sent source is not prelude.lua followed by the script", tc.desc)
		}
		for _, copied := range []string{"redis.call('TIME')", "cjson.decode", "SYNCGUARD_CORRUPT", "string.byte(", "'\\0"} {
			if strings.Contains(tc.body, copied) {
				t.Errorf("%s.lua contains %q: use the prelude's helper", tc.desc, copied)
			}
		}
	}
}
