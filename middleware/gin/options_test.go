package ginlock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestOptionsOfAnotherAdapter: an option of one adapter given to another
// adapter's constructor does not compile, in both directions.
func TestOptionsOfAnotherAdapter(t *testing.T) {
	guardtest.DoesNotCompile(t, "testdata/mixed",
		"cannot use ginlock.WithTTL(time.Minute) (value of func type ginlock.Option) as httplock.Option",
		"cannot use httplock.WithTTL(time.Minute) (value of func type httplock.Option) as ginlock.Option")
}
