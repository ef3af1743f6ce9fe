package asynqlock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests. In a
// replica process of the scheduler fleet test it runs the replica instead.
//
// The parallel tests mostly wait on their redis-servers and asynq
// servers, so four run at a time unless -parallel says otherwise.
func TestMain(m *testing.M) {
	schedReplica()
	redistest.DefaultParallel(4)
	redistest.Main(m)
}
