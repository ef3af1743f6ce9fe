package gocronlock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests. In a
// scheduler process of the fleet test it runs the scheduler instead.
func TestMain(m *testing.M) {
	fleetMember()
	redistest.Main(m)
}
