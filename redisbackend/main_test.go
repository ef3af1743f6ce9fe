package redisbackend_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests. In a
// worker process of the fleet test it runs the worker instead.
//
// The package's parallel tests each run their own redis-server (or
// cluster) and mostly wait on it, so four run at a time unless -parallel
// says otherwise.
func TestMain(m *testing.M) {
	fleetWorker()
	redistest.DefaultParallel(4)
	redistest.Main(m)
}
