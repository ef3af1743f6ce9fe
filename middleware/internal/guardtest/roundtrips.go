package guardtest

import (
	"net/http"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

// roundTrips counts the round trips to Redis of one request in each mode
// (a pipeline counts as one), in process, so that the release has
// returned when ServeHTTP has: a lock cycle is 2 (acquire, release); a
// replay's first run 2 (acquire or answer with the record, store the
// record and release); a replay of a stored response 1 (the answer); a
// slot of a concurrency limit 2 (take, free).
func roundTrips(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var o order
	build := a.Build
	if a.raw != nil {
		build = a.raw
	}
	plain := build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) { ok(w) }})
	limited := build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/slots"}, Limit: 2, Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) { ok(w) }})
	replay := build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle})
	const body = `{"item":"book","qty":1}`
	steps := []struct {
		desc string
		send func(k string) int
		want int64
	}{
		{"lock only", func(k string) int { return serve(plain, &k).Code }, 2},
		{"replay, first run", func(k string) int { return send(replay, "/orders", &k, body).Code }, 2},
		{"replay, stored response", func(k string) int { return send(replay, "/orders", &k, body).Code }, 1},
		{"concurrency limit", func(k string) int { return send(limited, "/slots", &k, "").Code }, 2},
	}
	// A first pass on keys of its own loads the scripts (a script's first
	// call may be answered NOSCRIPT and sent again).
	for pass, k := range []string{"warm-up", key} {
		for _, s := range steps {
			before := e.cmds.RoundTrips.Load()
			code := s.send(k)
			got := e.cmds.RoundTrips.Load() - before
			if code >= 300 {
				t.Errorf("%s (key %q): status %d", s.desc, k, code)
			}
			if pass == 1 && got != s.want {
				t.Errorf("%s: %d round trips, want %d", s.desc, got, s.want)
			}
		}
	}
}
