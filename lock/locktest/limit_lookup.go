package locktest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func (s *suite) limitLookupTests() []test {
	return []test{
		{"count, limit and holders without raw key or id", limitTest(s.testLookupLimit)},
		{"LookupID of a slot", limitTest(s.testLookupSlotID)},
	}
}

// testLookupLimit: LookupLimit is nil for a free key; with two slots it
// reports the count, the last grant's n, and each holder by hashes (the
// earliest expiry first, which here is not the grant order) with its fence
// and plausible times, and no formatting reveals the raw key or an id;
// after the releases it is nil again.
func (s *suite) testLookupLimit(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "secret-key")
	assertSlots(t, lim, key)
	start := time.Now()
	later := mustSlot(t, lim, key, 3, 2*longTTL)
	sooner := mustSlot(t, lim, key, 3, longTTL)

	info := holders(t, lim, key)
	if info == nil {
		t.Fatal("LookupLimit = nil, want two holders")
	}
	if info.KeyHash != lockdriver.HashKey(key) {
		t.Errorf("KeyHash = %q, want HashKey(key) = %q", info.KeyHash, lockdriver.HashKey(key))
	}
	if info.Limit != 3 {
		t.Errorf("Limit = %d, want 3", info.Limit)
	}
	if len(info.Holders) != 2 {
		t.Fatalf("%d holders, want 2", len(info.Holders))
	}
	for i, l := range []lock.Lease{sooner, later} { // earliest expiry first
		h := info.Holders[i]
		if h.IDHash != lockdriver.HashKey(l.ID) {
			t.Errorf("holder %d: IDHash = %q, want HashKey of the slot expiring %s", i, h.IDHash, []string{"first", "last"}[i])
		}
		if h.KeyHash != info.KeyHash {
			t.Errorf("holder %d: KeyHash = %q, want %q", i, h.KeyHash, info.KeyHash)
		}
		if h.Fence != l.Fence {
			t.Errorf("holder %d: Fence = %s, want %s", i, h.Fence, l.Fence)
		}
		if !near(h.ExpiresAt, l.ExpiresAt, time.Millisecond) {
			t.Errorf("holder %d: ExpiresAt = %v, want %v", i, h.ExpiresAt, l.ExpiresAt)
		}
		if d := h.ExpiresAt.Sub(h.AcquiredAt); d < l.TTL-50*time.Millisecond || d > l.TTL+50*time.Millisecond {
			t.Errorf("holder %d: ExpiresAt - AcquiredAt = %v, want the ttl %v", i, d, l.TTL)
		}
		if !near(h.AcquiredAt, start, clockSkew) {
			t.Errorf("holder %d: AcquiredAt = %v, want about now (%v)", i, h.AcquiredAt, start)
		}
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, info)
		if strings.Contains(out, key) || strings.Contains(out, later.ID) || strings.Contains(out, sooner.ID) {
			t.Errorf("fmt %s of the LimitInfo reveals the raw key or an id: %s", verb, out)
		}
	}

	// The most recent grant's n, even within the same millisecond.
	third := mustSlot(t, lim, key, 5, longTTL)
	if info := holders(t, lim, key); info == nil || info.Limit != 5 || len(info.Holders) != 3 {
		t.Errorf("after a grant with n=5: LookupLimit = %+v, want Limit 5 and 3 holders", info)
	}
	releaseAll(t, lim, key, later, sooner, third)
}

// testLookupSlotID: LookupID describes a slot like a lock (hashes of its
// key and id, its fence and expiry), and finds nothing once it is released.
func (s *suite) testLookupSlotID(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	l := mustSlot(t, lim, key, 2, longTTL)
	info, err := lim.LookupID(ctx(t), l.ID)
	if err != nil || info == nil {
		t.Fatalf("LookupID(slot) = %v, %v; want the slot", info, err)
	}
	want := lock.Info{KeyHash: lockdriver.HashKey(key), IDHash: lockdriver.HashKey(l.ID), Fence: l.Fence}
	if info.KeyHash != want.KeyHash || info.IDHash != want.IDHash || info.Fence != want.Fence {
		t.Errorf("LookupID(slot) = %+v, want hashes %s/%s and fence %s", info, want.KeyHash, want.IDHash, want.Fence)
	}
	if !near(info.ExpiresAt, l.ExpiresAt, time.Millisecond) {
		t.Errorf("LookupID(slot): ExpiresAt = %v, want %v", info.ExpiresAt, l.ExpiresAt)
	}
	mustRelease(t, lim, l)
	assertGone(t, lim, l.ID)
}
