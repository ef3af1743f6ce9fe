package rwlock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests.
func TestMain(m *testing.M) { redistest.Main(m) }

// newBackends returns n Backends on the shared server, each on a client
// of its own (default options), under one prefix: n instances of a fleet.
func newBackends(t testing.TB, n int) []*redisbackend.Backend {
	t.Helper()
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	bs := make([]*redisbackend.Backend, n)
	for i := range bs {
		b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: prefix})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { _ = b.Close() })
		bs[i] = b
	}
	return bs
}

// benchBackend is a Backend on the shared server for a benchmark.
func benchBackend(b *testing.B) *redisbackend.Backend { return newBackends(b, 1)[0] }
