package locktest

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// extendSlack is how far an extended expiry may be from the expected one:
// the time between the Acquire and the Extend, plus clock jitter.
const extendSlack = 500 * time.Millisecond

func (s *suite) extendTests() []test {
	return []test{{"replaces the remaining time", s.testExtend}}
}

// testExtend: Extend sets the expiry to ttl after now by the backend's
// clock, shorter or longer than before, returns it, and the lookups then
// report it; the fence is unchanged.
func (s *suite) testExtend(t *testing.T, b lock.Backend) {
	key := s.key(t, "k")
	l := mustAcquire(t, b, key, longTTL)
	for _, tc := range []struct {
		desc string
		ttl  time.Duration
	}{
		{"shorter", 2 * time.Second},
		{"longer", 20 * time.Second},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := b.Extend(ctx(t), l.ID, tc.ttl)
			if err != nil {
				t.Fatalf("Extend(%v): %v", tc.ttl, err)
			}
			// l.ExpiresAt - longTTL is "now" at Acquire by the backend's clock.
			want := l.ExpiresAt.Add(tc.ttl - longTTL)
			if !near(got, want, extendSlack) {
				t.Errorf("Extend(%v) = %v, want about %v (acquire time + %v, ±%v)", tc.ttl, got, want, tc.ttl, extendSlack)
			}
			for name, lookup := range map[string]func() (*lock.Info, error){
				"LookupID":  func() (*lock.Info, error) { return b.LookupID(ctx(t), l.ID) },
				"LookupKey": func() (*lock.Info, error) { return b.LookupKey(ctx(t), key) },
			} {
				info, err := lookup()
				if err != nil || info == nil {
					t.Fatalf("%s after Extend = %v, %v; want the lease", name, info, err)
				}
				if !near(info.ExpiresAt, got, time.Millisecond) {
					t.Errorf("%s after Extend: ExpiresAt = %v, want Extend's %v", name, info.ExpiresAt, got)
				}
				if info.Fence != l.Fence {
					t.Errorf("%s after Extend: Fence = %s, want unchanged %s", name, info.Fence, l.Fence)
				}
			}
		})
	}
	mustRelease(t, b, l)
	assertFree(t, b, key)
}
