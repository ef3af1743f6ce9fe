package chaos

import (
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// rwHistory builds a read-write key's history: grants (by mode, fence,
// worker, server ms held [from, to)) and their acquire and release calls,
// each a millisecond around the server's times.
type rwHistory struct {
	ops    []Op
	grants []Grant
}

func (h *rwHistory) hold(mode string, fence, worker int, from, to int64) {
	f, _ := lockdriver.FormatFence(uint64(fence))
	h.grants = append(h.grants, Grant{Key: RWKey, Fence: f, Worker: worker, Mode: mode,
		AcquiredMs: from, ExpiresMs: to + 10000, ReleaseCallNs: to * ms})
	h.ops = append(h.ops,
		Op{Kind: Acquire, Key: RWKey, Fence: f, Worker: worker, CallNs: (from - 1) * ms, ReturnNs: from * ms, FromNs: (from - 1) * ms},
		Op{Kind: Release, Key: RWKey, Fence: f, Worker: worker, CallNs: to * ms, ReturnNs: (to + 1) * ms})
}

// TestCheckReadWrite: readers side by side pass both CheckReadWrite and
// the linearizability model; a writer beside a reader, a reader beside a
// writer, or fences out of grant order fail both.
func TestCheckReadWrite(t *testing.T) {
	for _, tc := range []struct {
		desc      string
		build     func(h *rwHistory)
		wantCheck int // violations of CheckReadWrite
		wantLin   porcupine.CheckResult
	}{
		{"readers together, then a writer", func(h *rwHistory) {
			h.hold("read", 1, 0, 1000, 1100)
			h.hold("read", 2, 1, 1010, 1050)
			h.hold("write", 3, 2, 1110, 1200)
			h.hold("read", 4, 0, 1210, 1300)
		}, 0, porcupine.Ok},
		{"a writer beside a reader", func(h *rwHistory) {
			h.hold("read", 1, 0, 1000, 1100)
			h.hold("write", 2, 1, 1050, 1200)
		}, 1, porcupine.Illegal},
		{"a reader beside a writer", func(h *rwHistory) {
			h.hold("write", 1, 0, 1000, 1100)
			h.hold("read", 2, 1, 1050, 1200)
		}, 1, porcupine.Illegal},
		{"a writer's fence below an earlier reader's", func(h *rwHistory) {
			h.hold("read", 2, 0, 1000, 1100)
			h.hold("write", 1, 1, 1110, 1200)
		}, 1, porcupine.Illegal},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			var h rwHistory
			tc.build(&h)
			if vs, _ := CheckReadWrite(h.grants); len(vs) != tc.wantCheck {
				t.Errorf("CheckReadWrite: %v, want %d violations", vs, tc.wantCheck)
			}
			if got := CheckLinearizable(h.ops, h.grants, LinearizabilityTimeout).Result; got != tc.wantLin {
				t.Errorf("CheckLinearizable = %v, want %v", got, tc.wantLin)
			}
		})
	}
}
