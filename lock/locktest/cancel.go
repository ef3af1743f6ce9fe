package locktest

import (
	"context"
	"errors"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

func (s *suite) cancelTests() []test {
	return []test{{"cancelled context gives Aborted", s.testCancelled}}
}

// testCancelled: every method called with a cancelled context fails
// Aborted, matching context.Canceled, and changes nothing: a free key
// stays free, a held lease stays held with its expiry.
func (s *suite) testCancelled(t *testing.T, b lock.Backend) {
	free := s.key(t, "free")
	held := mustAcquire(t, b, s.key(t, "held"), longTTL)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()

	calls := []struct {
		name string
		call func() error
	}{
		{"Acquire", func() error { _, err := b.Acquire(cctx, free, longTTL); return err }},
		{"Release", func() error { return b.Release(cctx, held.ID) }},
		{"Extend", func() error { _, err := b.Extend(cctx, held.ID, 2*longTTL); return err }},
		{"IsLocked", func() error { _, err := b.IsLocked(cctx, held.Key); return err }},
		{"LookupKey", func() error { _, err := b.LookupKey(cctx, held.Key); return err }},
		{"LookupID", func() error { _, err := b.LookupID(cctx, held.ID); return err }},
	}
	for _, c := range calls {
		err := c.call()
		wantCode(t, c.name, err, lock.CodeAborted)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v does not match context.Canceled", c.name, err)
		}
	}
	assertFree(t, b, free)
	assertHeld(t, b, held)
	mustRelease(t, b, held)
}
