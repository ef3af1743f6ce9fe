package wire_test

import (
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// TestLeaderNotice: notices decode; the channel is per lock key and never
// a key name of the prefix's keys.
func TestLeaderNotice(t *testing.T) {
	for _, tc := range []struct {
		desc, payload string
		fence         string
		exp           int64
		owner         string
		ok            bool
	}{
		{"term", "000000000000007 1795344179534 node 1", "000000000000007", 1795344179534, "node 1", true},
		{"end", wire.EndNotice("000000000000007"), "000000000000007", 0, "", true},
		{"bad fence", "7 1 x", "", 0, "", false},
		{"no expiry", "000000000000007", "", 0, "", false},
		{"negative", "000000000000007 -1 x", "", 0, "", false},
	} {
		f, exp, owner, ok := wire.DecodeLeaderNotice(tc.payload)
		if string(f) != tc.fence || exp != tc.exp || owner != tc.owner || ok != tc.ok {
			t.Errorf("%s: got %q %d %q %v", tc.desc, f, exp, owner, ok)
		}
	}
	a, b := wire.LeaderChannel("p", "p:a"), wire.LeaderChannel("p", "p:b")
	if a == b || !strings.HasPrefix(a, "p:leader:") || len(a) != len("p:leader:")+22 {
		t.Errorf("LeaderChannel = %q, %q", a, b)
	}
}
