package redisbackend_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests. In a
// worker process of the fleet test it runs the worker instead.
func TestMain(m *testing.M) {
	fleetWorker()
	redistest.Main(m)
}
