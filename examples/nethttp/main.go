// Nethttp shows httplock guarding a net/http route: POST /orders/{id}/pay
// is locked on its Idempotency-Key header, so a payment attempt runs once
// however many times the client (or a retrying proxy) sends it at once.
//
//  1. A burst: 10 identical requests fire at the same moment. One is
//     served (200, with its lease's fence); the other 9 are turned away at
//     once with 409 Conflict and a Retry-After header.
//  2. Three more identical requests, one after the other: each is served,
//     under a strictly higher fence than the one before.
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
// To use a real Redis server instead, set REDIS_URL. The lock keys go under
// a random prefix (httplock-demo:<hex>) and expire on their own; nothing
// else on the server is touched (a striped fence counter stays, as fence
// counters must).
//
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/nethttp
//
// It exits non-zero when the library misbehaves: any tally other than
// exactly one 200 and nine 409s in the burst, or fences that do not
// increase.
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
	burst      = 10                     // concurrent duplicates in part 1
	sequential = 3                      // duplicates one after the other in part 2
	work       = 200 * time.Millisecond // how long the handler takes
	ttl        = 10 * time.Second       // lease TTL, kept alive while the handler runs
	idemKey    = "pay-42-attempt-1"     // the Idempotency-Key of every request
)

func main() { demorun.Main("nethttp demo", demo) }

// payment is the body of a 200 answer.
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
	// One request at a time per Idempotency-Key. To lock per order instead,
	// use httplock.FromPathValue("id") (the {id} wildcard), or both with
	// httplock.Compose(httplock.FromPathValue("id"), httplock.FromHeader("Idempotency-Key")).
	mw, err := httplock.New(backend,
		httplock.WithKeyFunc(httplock.FromHeader("Idempotency-Key")),
		httplock.WithTTL(ttl),
		// No WithWait: a busy key is answered 409 at once.
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
		json.NewEncoder(w).Encode(payment{Order: r.PathValue("id"), Fence: l.Fence})
	})))
	srv := httptest.NewServer(mux) // a real listener on 127.0.0.1; in production, http.ListenAndServe
	defer srv.Close()
	url := srv.URL + "/orders/42/pay"
	header := http.Header{"Idempotency-Key": {idemKey}}
	fmt.Fprintf(w, "Server: POST %s, locked on Idempotency-Key (TTL %v, no wait)\n", url, ttl)

	// Part 1: the burst.
	fmt.Fprintf(w, "\n== Part 1: %d concurrent duplicates (Idempotency-Key: %s) ==\n", burst, idemKey)
	replies, err := b.Fire(ctx, srv.Client(), http.MethodPost, url, header)
	if err != nil {
		return err
	}
	won, err := demohttp.CheckBurst(w, replies)
	if err != nil {
		return err
	}

	// Part 2: one after the other.
	fmt.Fprintf(w, "\n== Part 2: %d sequential duplicates (same key, lock free again) ==\n", sequential)
	if err := demohttp.Sequential(ctx, w, srv.Client(), http.MethodPost, url, header, sequential, won); err != nil {
		return err
	}

	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(w, "\nHandlers ran %d times, under fences %s\n", len(fences), demohttp.JoinFences(fences))
	if len(fences) != 1+sequential {
		return fmt.Errorf("handlers ran %d times, want %d", len(fences), 1+sequential)
	}
	fmt.Fprintf(w, "OK: one payment per burst, every 409 with Retry-After, fences strictly increasing\n")
	return nil
}
