package grpclock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestOptionsOfAnotherAdapter: an HTTP adapter's option given to
// grpclock, or grpclock's to an HTTP adapter, does not compile.
func TestOptionsOfAnotherAdapter(t *testing.T) {
	guardtest.DoesNotCompile(t, "testdata/mixed",
		`cannot use httplock.WithProblemTypeBase("https://example.com/p/") (value of func type httplock.Option) as grpclock.Option`,
		"cannot use grpclock.WithReplayCodes(nil) (value of func type grpclock.Option) as httplock.Option")
}
