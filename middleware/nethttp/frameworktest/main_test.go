// The tests of this directory run httplock behind the frameworks that
// serve net/http handlers (chi, Connect). They are a module of their own,
// never published, so that the root module's go.mod, which every user's
// module graph includes, does not require those frameworks.
package httplock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests.
func TestMain(m *testing.M) { redistest.Main(m) }
