package httplock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests.
func TestMain(m *testing.M) { redistest.Main(m) }
