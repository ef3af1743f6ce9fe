// Nethttp shows httplock in replay mode guarding a net/http route: POST
// /orders/{id}/pay is locked on its Idempotency-Key header and its first
// response is stored, so a payment runs once however many times the
// client (or a retrying proxy) sends it, at once or later.
//
//  1. A burst: 10 identical requests fire at the same moment. One runs
//     (201, with its lease's fence); the other 9 are turned away at once
//     with 409 Conflict and a Retry-After header.
//  2. Three retries, one after the other: each gets the first response
//     back (201, the same fence, Idempotent-Replayed: true) without
//     running the handler.
//  3. The same key with a different body: 422, the handler does not run.
//  4. At most 3 exports per user (httplock.WithLimit(3) on POST
//     /exports, keyed by the X-User header): 10 exports of one user fire
//     at once; 3 run, the other 7 are answered 429 Too Many Requests with
//     Retry-After, and the peak number of exports running at once is
//     printed.
//  5. The same burst on a route that waits for a slot (WithWait): all 10
//     are served, never more than 3 at once.
//
// An Idempotency-Key per request makes the key space unbounded, so the
// backend has striped fence counters (redisbackend.Options.FenceStripes):
// a per-key counter would stay in Redis forever for every key, while N
// stripes bound Redis to N counters and still give each key strictly
// increasing fences (not consecutive ones: they start near the server's
// clock in milliseconds).
//
// It needs no set-up: by default it runs on an embedded Redis (miniredis).
//
//	make demo        # or: go run ./examples/nethttp
//
// To use a real Redis server instead, set REDIS_URL. The lock keys and
// stored responses go under a random prefix (httplock-demo:<hex>) and
// expire on their own; nothing else on the server is touched (a striped
// fence counter stays, as fence counters must).
//
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/nethttp
//
// It exits non-zero when the library misbehaves: any tally other than
// exactly one 201 and nine 409s in the burst, a retry that is not a
// replay of the first response, a reused key not answered 422, or a
// handler that ran more than once; more than 3 exports of a user running
// at once, an answer other than 200 or 429 to an export (a 429 without
// Retry-After), or a waiting export not served.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demohttp"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"

	"github.com/syncguard-go/syncguard/lock"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const (
	burst     = 10                     // concurrent duplicates in part 1
	retries   = 3                      // retries one after the other in part 2
	work      = 200 * time.Millisecond // how long the handler takes
	ttl       = 10 * time.Second       // lease TTL, kept alive while the handler runs
	replayTTL = time.Hour              // how long the first response is replayed
	idemKey   = "pay-42-attempt-1"     // the Idempotency-Key of every request
	body      = `{"amount":"12.50"}`   // the payment every request asks for

	exports     = 10                    // concurrent exports of one user in parts 4 and 5
	exportLimit = 3                     // at most this many exports per user at once
	exportWork  = 50 * time.Millisecond // how long an export takes in part 5
	exportWait  = 10 * time.Second      // how long an export waits for a slot in part 5
	user        = "alice"               // the X-User of every export
)

func main() { demorun.Main("nethttp demo", demo) }

// payment is the body of a 201 answer.
type payment struct {
	Order string     `json:"order"`
	Fence lock.Fence `json:"fence"`
}

// export is the body of a 200 answer to an export.
type export struct {
	User  string     `json:"user"`
	Fence lock.Fence `json:"fence"`
}

// demo serves the locked route on a local server and fires the requests.
func demo(ctx context.Context, env *demorun.Env) error {
	w := env.Out
	// Idempotency keys are unbounded: striped fence counters keep Redis's
	// memory bounded (DefaultFenceStripes counters, whatever the number of
	// keys), and a key's fences still strictly increase.
	backend, err := env.BackendWith("httplock-demo", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return err
	}
	// One request at a time per Idempotency-Key (and route: keys include
	// "POST /orders/{id}/pay"), and the first response stored for an hour
	// and replayed to retries. To lock per order instead, use
	// httplock.FromPathValue("id") (the {id} wildcard), or both with
	// httplock.Compose(httplock.FromPathValue("id"), httplock.FromHeader("Idempotency-Key")).
	mw, err := httplock.New(backend,
		httplock.WithKeyFunc(httplock.FromHeader("Idempotency-Key")),
		httplock.WithTTL(ttl),
		httplock.WithReplay(replayTTL),
		// No WithWait: a busy key is answered 409 at once. With a wait,
		// the duplicates would get the first response when it is stored.
	)
	if err != nil {
		return err
	}
	var (
		mu     sync.Mutex
		fences []lock.Fence // as the handlers saw them
	)
	// The burst's winner stays in its handler until its duplicates have
	// been answered (see demohttp.Burst), however loaded the machine.
	b := demohttp.NewBurst(burst, 2*time.Second)
	mux := http.NewServeMux()
	mux.Handle("POST /orders/{id}/pay", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, ok := lock.LeaseFrom(r.Context())
		if !ok {
			http.Error(w, "no lease", http.StatusInternalServerError)
			return
		}
		mu.Lock()
		fences = append(fences, l.Fence)
		mu.Unlock()
		b.Hold(r.Context())
		select {
		case <-time.After(work): // charge the card, passing l.Fence to fenced writes
		case <-r.Context().Done(): // the client left, or the lease was lost
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(payment{Order: r.PathValue("id"), Fence: l.Fence})
	})))
	srv := httptest.NewServer(mux) // a real listener on 127.0.0.1; in production, http.ListenAndServe
	defer srv.Close()
	url := srv.URL + "/orders/42/pay"
	header := http.Header{"Idempotency-Key": {idemKey}}
	fmt.Fprintf(w, "Server: POST %s, locked on Idempotency-Key (TTL %v, no wait), responses replayed for %v\n", url, ttl, replayTTL)

	// Part 1: the burst.
	fmt.Fprintf(w, "\n== Part 1: %d concurrent duplicates (Idempotency-Key: %s) ==\n", burst, idemKey)
	replies, err := b.Fire(ctx, srv.Client(), http.MethodPost, url, header, body)
	if err != nil {
		return err
	}
	first, err := demohttp.CheckBurst(w, replies, http.StatusCreated)
	if err != nil {
		return err
	}

	// Part 2: retries, one after the other.
	fmt.Fprintf(w, "\n== Part 2: %d retries (same key, same body) ==\n", retries)
	if err := demohttp.Replays(ctx, w, srv.Client(), http.MethodPost, url, header, body, retries, first); err != nil {
		return err
	}

	// Part 3: the key reused for another payment.
	fmt.Fprintf(w, "\n== Part 3: the same key, another body ==\n")
	r, err := demohttp.SendBody(ctx, srv.Client(), http.MethodPost, url, header, `{"amount":"99.00"}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  request: %s\n", r)
	if r.Status != http.StatusUnprocessableEntity {
		return fmt.Errorf("reused key: %s, want 422", r)
	}

	mu.Lock()
	ran := len(fences)
	fmt.Fprintf(w, "\nHandlers ran %d time(s), under fence %s\n", ran, demohttp.JoinFences(fences))
	mu.Unlock()
	if ran != 1 {
		return fmt.Errorf("handlers ran %d times, want 1", ran)
	}
	fmt.Fprintf(w, "OK: one payment for %d requests, every 409 with Retry-After, retries replayed, the reused key refused\n", burst+retries+1)

	if err := limitDemo(ctx, w, backend); err != nil {
		return err
	}
	fmt.Fprintf(w, "OK: never more than %d exports of a user at once, every 429 with Retry-After, every waiting export served\n", exportLimit)
	return nil
}

// limitDemo is parts 4 and 5: at most exportLimit exports per user, on
// the same backend, answered 429 (part 4) or queued (part 5) over it.
func limitDemo(ctx context.Context, w io.Writer, backend lock.Backend) error {
	limited := func(opts ...httplock.Option) (func(http.Handler) http.Handler, error) {
		return httplock.New(backend, append([]httplock.Option{
			httplock.WithKeyFunc(httplock.FromHeader("X-User")),
			httplock.WithPrefix("exports:"),
			httplock.WithTTL(ttl),
			httplock.WithLimit(exportLimit), // a slot per export: at most 3 per user, across every instance
		}, opts...)...)
	}
	now, err := limited() // no wait: the 4th concurrent export is answered 429 at once
	if err != nil {
		return err
	}
	queued, err := limited(httplock.WithWait(exportWait)) // waits for a slot instead
	if err != nil {
		return err
	}
	// Part 4's winners hold their slots until the others have been
	// answered (demohttp.Burst), however loaded the machine.
	b := demohttp.NewLimitBurst(exports, exportLimit, 2*time.Second)
	var nowRuns, queuedRuns demohttp.Gauge
	exporter := func(g *demohttp.Gauge, hold func(r *http.Request)) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer g.Enter()()
			l, _ := lock.LeaseFrom(r.Context()) // the slot: a lease with a fence of its own
			hold(r)                             // export the user's data
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(export{User: r.Header.Get("X-User"), Fence: l.Fence})
		})
	}
	mux := http.NewServeMux()
	mux.Handle("POST /exports", now(exporter(&nowRuns, func(r *http.Request) { b.Hold(r.Context()) })))
	mux.Handle("POST /exports/queued", queued(exporter(&queuedRuns, func(r *http.Request) {
		select {
		case <-time.After(exportWork):
		case <-r.Context().Done():
		}
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	header := http.Header{"X-User": {user}}

	fmt.Fprintf(w, "\n== Part 4: %d concurrent exports of one user (X-User: %s), at most %d at once ==\n", exports, user, exportLimit)
	replies, err := b.Fire(ctx, srv.Client(), http.MethodPost, srv.URL+"/exports", header, "")
	if err != nil {
		return err
	}
	if err := demohttp.CheckLimited(w, replies, exportLimit, nowRuns.Peak()); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n== Part 5: %d concurrent exports of one user, waiting up to %v for a slot ==\n", exports, exportWait)
	replies, err = demohttp.Fire(ctx, srv.Client(), http.MethodPost, srv.URL+"/exports/queued", header, exports)
	if err != nil {
		return err
	}
	if err := demohttp.CheckLimited(w, replies, exportLimit, queuedRuns.Peak()); err != nil {
		return err
	}
	if got, want := demohttp.Tally(replies), fmt.Sprintf("200: %d", exports); got != want {
		return fmt.Errorf("waiting exports: tally %q, want %q", got, want)
	}
	return nil
}
