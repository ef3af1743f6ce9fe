// Package notrun holds the documentation snippets that are whole test
// functions. In a _test.go file go test would run them (and a second
// TestMain or TestConformance may clash with a package's own); here, in a
// non-test file of a package nothing imports, go vet and go build compile
// them and nothing runs them. testkit/readme checks that the documentation
// quotes the marked regions verbatim.
package notrun

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The package comment of lock/locktest (doc.go) quotes this function.
// README: locktest-conformance
func TestConformance(t *testing.T) {
	locktest.Run(t, func(t *testing.T) lock.Backend {
		return newIsolatedBackend(t) // e.g. a unique key prefix per subtest
	})
}

// END README

// newIsolatedBackend is a backend on the shared test Redis under a prefix
// of the subtest's own, as redisbackend's conformance tests build it.
func newIsolatedBackend(t *testing.T) lock.Backend {
	b, err := redisbackend.New(redistest.Shared(t).Client(t), &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatalf("redisbackend.New: %v", err)
	}
	return b
}
