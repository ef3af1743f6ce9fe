package gocronlock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// instance is one instance of a service on the shared redis-server: a
// backend on a client of its own, whose commands are counted, under a
// prefix the test shares among its instances.
type instance struct {
	backend *redisbackend.Backend
	cmds    *redistest.Counter
}

// instances returns n instances sharing one key prefix.
func instances(t testing.TB, n int) []instance {
	t.Helper()
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	out := make([]instance, n)
	for i := range out {
		rc := srv.Client(t)
		out[i].cmds = redistest.Count(rc)
		b, err := redisbackend.New(rc, &redisbackend.Options{Prefix: prefix, DisableConfigRecord: true})
		if err != nil {
			t.Fatal(err)
		}
		out[i].backend = b
	}
	return out
}
