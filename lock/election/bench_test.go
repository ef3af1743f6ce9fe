package election_test

import (
	"slices"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// BenchmarkElectionHandOff measures a hand-off: from a leader's fn
// returning nil (resign) to the next leader's fn starting, with two
// candidates on two Backends (clients of their own) taking turns. It
// reports the p50 and p99 latencies, and the share of terms that went to
// the other candidate (the rest: the resigned leader took the key again
// before the other had queued).
//
//	go test ./lock/election/ -run '^$' -bench ElectionHandOff -benchtime 200x
func BenchmarkElectionHandOff(b *testing.B) {
	srv := redistest.Start(b)
	bs := newBackends(b, srv, redistest.Prefix(b), 2)
	const key = "bench:handoff"
	ttl := election.WithTTL(30 * time.Second)
	terms := make(chan started, 4)
	runCandidate(b, bs[0], key, "a", terms, ttl)
	cur := next(b, terms, 10*time.Second)
	runCandidate(b, bs[1], key, "b", terms, ttl)
	time.Sleep(200 * time.Millisecond) // b queues
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	handed := 0
	for range b.N {
		resigned, was := time.Now(), cur.who
		cur.ended <- nil
		cur = next(b, terms, 10*time.Second)
		lat = append(lat, cur.at.Sub(resigned))
		if cur.who != was {
			handed++ // else the resigned leader took the free key again
		}
	}
	b.StopTimer()
	cur.ended <- nil
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(handed)/float64(b.N), "handed/op")
}
