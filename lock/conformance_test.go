package lock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/locktest"
)

// TestConformance runs locktest's suite on the fakes: a Backend with no
// extension, the same through lock.WithHooks with a hook that passes every
// operation on, and a lock.IDBackend through WithHooks. The suite uses
// only Backend's methods, so it must pass on each unchanged; the hooks
// must change nothing any call returns.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		desc string
		new  func() lock.Backend
	}{
		{"core Backend", func() lock.Backend { return newFake() }},
		{"core Backend, hooked", func() lock.Backend { return lock.WithHooks(newFake(), passHook()) }},
		{"IDBackend, hooked", func() lock.Backend { return lock.WithHooks(newIDFake(nil), passHook()) }},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			locktest.Run(t, func(t *testing.T) lock.Backend { return tc.new() })
		})
	}
}
