package wire_test

import (
	"errors"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
)

func TestDecodeSlotIndex(t *testing.T) {
	got, err := wire.DecodeSlotIndex("\x01000000000000007 1700000000000 3 7 p:exp:1exp:1")
	want := wire.SlotIndex{Fence: "000000000000007", AcquiredAtMs: 1700000000000, N: 3, LockKey: "p:exp:1", UserKey: "exp:1"}
	if err != nil || got != want {
		t.Errorf("DecodeSlotIndex = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"", "p:k", "\x001:nonce", "\x01x 1 3 1 ab", "\x01000000000000007 1 0 1 ab", "\x01000000000000007 1 3 9 ab", "\x01000000000000007 1 3"} {
		if _, err := wire.DecodeSlotIndex(bad); !errors.Is(err, wire.ErrNotSlotIndex) {
			t.Errorf("DecodeSlotIndex(%q) = %v, want ErrNotSlotIndex", bad, err)
		}
	}
}

func TestReservedKey(t *testing.T) {
	for key, want := range map[string]bool{"id:x": true, "fence:x": true, "done:": true, "record:a": true, "queue:q": true,
		"id": false, "idx:1": false, "config:backend": false, "orders:id:1": false, "": false} {
		if got := wire.ReservedKey(key); got != want {
			t.Errorf("ReservedKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestIsTombstone(t *testing.T) {
	if !wire.IsTombstone("\x001:abc") || wire.IsTombstone("p:k") || wire.IsTombstone("\x01...") {
		t.Error("IsTombstone tells a tombstone from an index wrongly")
	}
}

func TestDecodeRWIndex(t *testing.T) {
	got, err := wire.DecodeRWIndex("\x021 w 000000000000007 1700000000000 1700000030000 4 p:cfcfg")
	want := wire.RWIndex{Mode: 'w', Fence: "000000000000007", AcquiredAtMs: 1700000000000, ExpiresAtMs: 1700000030000, LockKey: "p:cf", UserKey: "cfg"}
	if err != nil || got != want {
		t.Errorf("DecodeRWIndex = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"", "p:k", "\x01000000000000007 1 3 1 ab", "\x021 x 000000000000007 1 2 1 ab",
		"\x021 r 7 1 2 1 ab", "\x021 r 000000000000007 1 2 9 ab", "\x022 r 000000000000007 1 2 1 ab", "\x021 r 000000000000007 1 1 ab"} {
		if _, err := wire.DecodeRWIndex(bad); !errors.Is(err, wire.ErrNotRWIndex) {
			t.Errorf("DecodeRWIndex(%q) = %v, want ErrNotRWIndex", bad, err)
		}
	}
}
