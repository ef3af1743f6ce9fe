package rwlock_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// BenchmarkCycle compares an uncontended cycle (acquire, run, release) of
// a reader and of a writer with a plain lock's, on the shared server, a
// new key per cycle. bench/scriptcost measures what the cycles cost Redis
// (docs/readwrite.md has the figures).
func BenchmarkCycle(b *testing.B) {
	for _, c := range []struct {
		name string
		do   func(context.Context, lock.Backend, string, func(context.Context, lock.Lease) error, ...lock.Option) error
	}{{"lock", lock.Do}, {"read", rwlock.Read}, {"write", rwlock.Write}} {
		b.Run(c.name, func(b *testing.B) {
			be := benchBackend(b)
			fn := func(context.Context, lock.Lease) error { return nil }
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := c.do(context.Background(), be, "k"+strconv.Itoa(i), fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
