package redisbackend_test

import (
	"flag"
	"testing"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests. In a
// worker process of the fleet test it runs the worker instead.
//
// The package's parallel tests each run their own redis-server (or
// cluster) and mostly wait on it, so four run at a time unless -parallel
// says otherwise.
func TestMain(m *testing.M) {
	fleetWorker()
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "4")
	}
	redistest.Main(m)
}
