package locktest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// clockSkew bounds how far the backend's clock may be from the local one
// for the plausibility checks: loose, but tight enough to catch seconds
// read as milliseconds.
const clockSkew = time.Minute

func (s *suite) lookupTests() []test {
	return []test{
		{"describes the lease without raw key or id", s.testLookupSanitised},
		{"nil when free or released", s.testLookupNil},
		{"IsLocked", s.testIsLocked},
	}
}

// testLookupSanitised: both lookups of a held lease report hashes of its
// key and id, its fence and plausible times, and no formatting of the Info
// reveals the raw key or id.
func (s *suite) testLookupSanitised(t *testing.T, b lock.Backend) {
	key := s.key(t, "secret-key")
	start := time.Now()
	l := mustAcquire(t, b, key, longTTL)
	if !near(l.ExpiresAt, start.Add(longTTL), clockSkew) {
		t.Errorf("Lease.ExpiresAt = %v, want about %v (now + ttl)", l.ExpiresAt, start.Add(longTTL))
	}
	byKey, err := b.LookupKey(ctx(t), key)
	if err != nil || byKey == nil {
		t.Fatalf("LookupKey = %v, %v; want the lease", byKey, err)
	}
	byID, err := b.LookupID(ctx(t), l.ID)
	if err != nil || byID == nil {
		t.Fatalf("LookupID = %v, %v; want the lease", byID, err)
	}
	for name, info := range map[string]*lock.Info{"LookupKey": byKey, "LookupID": byID} {
		if info.KeyHash != lockdriver.HashKey(key) {
			t.Errorf("%s: KeyHash = %q, want HashKey(key) = %q", name, info.KeyHash, lockdriver.HashKey(key))
		}
		if info.IDHash != lockdriver.HashKey(l.ID) {
			t.Errorf("%s: IDHash = %q, want HashKey(id) = %q", name, info.IDHash, lockdriver.HashKey(l.ID))
		}
		if info.Fence != l.Fence {
			t.Errorf("%s: Fence = %s, want the lease's %s", name, info.Fence, l.Fence)
		}
		if !near(info.ExpiresAt, l.ExpiresAt, time.Millisecond) {
			t.Errorf("%s: ExpiresAt = %v, want the lease's %v", name, info.ExpiresAt, l.ExpiresAt)
		}
		if d := info.ExpiresAt.Sub(info.AcquiredAt); d < longTTL-50*time.Millisecond || d > longTTL+50*time.Millisecond {
			t.Errorf("%s: ExpiresAt - AcquiredAt = %v, want the ttl %v", name, d, longTTL)
		}
		if !near(info.AcquiredAt, start, clockSkew) {
			t.Errorf("%s: AcquiredAt = %v, want about now (%v)", name, info.AcquiredAt, start)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			out := fmt.Sprintf(verb, info)
			if strings.Contains(out, key) || strings.Contains(out, l.ID) {
				t.Errorf("%s: fmt %s of the Info reveals the raw key or id: %s", name, verb, out)
			}
		}
	}
	mustRelease(t, b, l)
}

// testLookupNil: lookups of a key never locked, an id never granted, and a
// released lease return nil, nil.
func (s *suite) testLookupNil(t *testing.T, b lock.Backend) {
	assertFree(t, b, s.key(t, "never-locked"))
	assertGone(t, b, lockdriver.NewLockID())

	key := s.key(t, "released")
	l := mustAcquire(t, b, key, longTTL)
	mustRelease(t, b, l)
	assertFree(t, b, key)
	assertGone(t, b, l.ID)
}

// testIsLocked: false before, true while held (only for that key), false
// after release.
func (s *suite) testIsLocked(t *testing.T, b lock.Backend) {
	key, other := s.key(t, "k"), s.key(t, "other")
	isLocked := func(k string) bool {
		t.Helper()
		ok, err := b.IsLocked(ctx(t), k)
		if err != nil {
			t.Fatalf("IsLocked: %v", err)
		}
		return ok
	}
	if isLocked(key) {
		t.Errorf("IsLocked before Acquire = true, want false")
	}
	l := mustAcquire(t, b, key, longTTL)
	if !isLocked(key) {
		t.Errorf("IsLocked while held = false, want true")
	}
	if isLocked(other) {
		t.Errorf("IsLocked of another key while the first is held = true, want false")
	}
	mustRelease(t, b, l)
	if isLocked(key) {
		t.Errorf("IsLocked after Release = true, want false")
	}
}
