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
// handler that ran more than once.
package main

import (
	"context"
	"encoding/json"
	"fmt"
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
)

func main() { demorun.Main("nethttp demo", demo) }

// payment is the body of a 201 answer.
type payment struct {
	Order string     `json:"order"`
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
	defer mu.Unlock()
	fmt.Fprintf(w, "\nHandlers ran %d time(s), under fence %s\n", len(fences), demohttp.JoinFences(fences))
	if len(fences) != 1 {
		return fmt.Errorf("handlers ran %d times, want 1", len(fences))
	}
	fmt.Fprintf(w, "OK: one payment for %d requests, every 409 with Retry-After, retries replayed, the reused key refused\n", burst+retries+1)
	return nil
}
