package asynqlock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests. In a
// replica process of the scheduler fleet test it runs the replica instead.
func TestMain(m *testing.M) {
	schedReplica()
	redistest.Main(m)
}
