package wire_test

import (
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// TestKeyNames pins the names of a lock's other keys, which the TypeScript
// library, earlier releases and the syncguard command read.
func TestKeyNames(t *testing.T) {
	long := "p:" + strings.Repeat("k", 990)
	hashedFence, err := wire.MakeStorageKey("p", "fence:"+long, 1000, 26)
	if err != nil {
		t.Fatal(err)
	}
	must := func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct{ got, want string }{
		{wire.IndexPrefix("p"), "p:id:"},
		{wire.IndexKey("p", "AbCdEfGhIjKlMnOpQrStUv"), "p:id:AbCdEfGhIjKlMnOpQrStUv"},
		{wire.ClusterIndexKey("p", "AbCdEfGhIjKlMnOpQrStUv"), "p:{AbC}:id:AbCdEfGhIjKlMnOpQrStUv"},
		{must(wire.FenceKey("syncguard", "syncguard:resource:1")), "syncguard:fence:syncguard:resource:1"},
		{must(wire.FenceKey("p", long)), hashedFence},
		{wire.StripeKey("p:{AAD}", 3), "p:{AAD}:fence::3"},
		{must(wire.DoneKey("p", "p:k")), "p:done:p:k"},
		{must(wire.RecordKey("p:{abc}", "p:{abc}:k")), "p:{abc}:record:p:{abc}:k"},
		{wire.QueuePrefix("p"), "p:queue:"},
		{wire.QueueKey("p", "p:{abc}:k"), "p:queue:p:{abc}:k"},
		{wire.TagPrefix("p", "abc"), "p:{abc}"},
		{"p:" + wire.ConfigKeyName, "p:config:backend"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if len(hashedFence) >= 100 {
		t.Errorf("a long lock key's fence key %q is not hashed", hashedFence)
	}
}

func TestCutTagPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, tagPrefix, rest string
		ok                    bool
	}{
		{"p:{abc}:k", "p:{abc}", "k", true},
		{"p:{abc}:fence::1", "p:{abc}", "fence::1", true},
		{"p:{ab}:k", "", "", false},
		{"p:k", "", "", false},
		{"q:{abc}:k", "", "", false},
	} {
		tp, rest, ok := wire.CutTagPrefix("p", tc.name)
		if tp != tc.tagPrefix || rest != tc.rest || ok != tc.ok {
			t.Errorf("CutTagPrefix(p, %q) = %q, %q, %v; want %q, %q, %v", tc.name, tp, rest, ok, tc.tagPrefix, tc.rest, tc.ok)
		}
	}
	if !wire.IsStripe("fence::0") || wire.IsStripe("fence:p:k") {
		t.Error("IsStripe tells a stripe's counter from a key's wrongly")
	}
}

func TestReservedPrefixSegment(t *testing.T) {
	for seg, want := range map[string]bool{"id": true, "fence": true, "done": true, "record": true, "queue": true,
		"config": true, "ids": false, "": false, "app": false} {
		if got := wire.ReservedPrefixSegment(seg); got != want {
			t.Errorf("ReservedPrefixSegment(%q) = %v, want %v", seg, got, want)
		}
	}
}

func TestDecodeTombstone(t *testing.T) {
	for _, tc := range []struct {
		v     string
		want  wire.Tombstone
		ok    bool
		ended bool
	}{
		{"\x001:n0nce", wire.Tombstone{Result: "1", Nonce: "n0nce"}, true, true},
		{"\x00-2:x", wire.Tombstone{Result: "-2", Nonce: "x"}, true, true},
		{"\x00-1:x", wire.Tombstone{Result: "-1", Nonce: "x"}, true, false},
		{"\x001", wire.Tombstone{}, false, false},
		{"p:k", wire.Tombstone{}, false, false},
		{"\x01000000000000001 1 1 3 p:kk", wire.Tombstone{}, false, false},
	} {
		got, ok := wire.DecodeTombstone(tc.v)
		if ok != tc.ok || (ok && (got != tc.want || got.EndedGrant() != tc.ended)) {
			t.Errorf("DecodeTombstone(%q) = %+v, %v (ended %v); want %+v, %v (ended %v)", tc.v, got, ok, got.EndedGrant(), tc.want, tc.ok, tc.ended)
		}
	}
}

func TestDecodeDone(t *testing.T) {
	if f, err := wire.DecodeDone("000000000000042"); err != nil || f != "000000000000042" {
		t.Errorf("DecodeDone = %q, %v", f, err)
	}
	for _, bad := range []string{"", "42", "SGR\x02000000000000042", "00000000000004x"} {
		if _, err := wire.DecodeDone(bad); err == nil {
			t.Errorf("DecodeDone(%q) accepted it", bad)
		}
	}
}
