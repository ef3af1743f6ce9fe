// Nethttp shows httplock guarding net/http routes; docs/http.md tells
// what each part shows.
//
//  1. A burst of 10 identical payments: one runs, 9 get 409.
//  2. Three retries get the first response back, replayed.
//  3. The key with another body: 422. Bob's payment with alice's key runs.
//  4. At most 3 exports per user: of 10 at once, 7 get 429.
//  5. The same on a route that waits for a slot: all 10 are served.
//
// It runs on an embedded Redis, or on REDIS_URL under a random prefix, and
// exits non-zero when the library misbehaves.
//
//	make demo        # or: go run ./examples/nethttp
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/nethttp
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demohttp"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"

	"github.com/syncguard-go/syncguard/lock"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const (
	burst     = 10 // concurrent duplicates in part 1
	retries   = 3  // sequential retries in part 2
	work      = 200 * time.Millisecond
	ttl       = 10 * time.Second
	replayTTL = time.Hour
	idemKey   = `"pay-42-attempt-1"` // an sf-string
	body      = `{"amount":"12.50"}`
	user      = "alice"
	other     = "bob" // sends alice's key and body in part 3

	exports     = 10 // concurrent exports of one user
	exportLimit = 3
	exportWork  = 50 * time.Millisecond
	exportWait  = 10 * time.Second // for a slot in part 5
)

func main() { demorun.Main("nethttp demo", demo) }

// payment is the body of a 201 answer.
type payment struct {
	Order string     `json:"order"`
	User  string     `json:"user"` // whom it was made for
	Fence lock.Fence `json:"fence"`
}

// export is the body of a 200 answer to an export.
type export struct {
	User  string     `json:"user"`
	Fence lock.Fence `json:"fence"`
}

// run is a run of the payment handler, as the handler saw it.
type run struct {
	user  string
	fence lock.Fence
}

// demo runs parts 1 to 3 on the payment route, then parts 4 and 5 on the
// export routes, all on one backend.
func demo(ctx context.Context, env *demorun.Env) error {
	// Idempotency keys are unbounded: striped fence counters keep Redis's
	// memory bounded, and a key's fences still strictly increase.
	backend, err := env.BackendWith("httplock-demo", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return err
	}
	pay, err := newPayServer(backend)
	if err != nil {
		return err
	}
	defer pay.Close()
	if err := payDemo(ctx, env.Out, pay); err != nil {
		return err
	}
	return limitDemo(ctx, env.Out, backend)
}

// payServer serves POST /orders/{id}/pay behind authentication and
// httplock in replay mode, and keeps the runs of its handler.
type payServer struct {
	*httptest.Server // in production, http.ListenAndServe

	// burst holds part 1's winner until its duplicates are answered.
	burst *demohttp.Burst

	mu   sync.Mutex
	runs []run
}

// newPayServer starts the payment route on a local server.
func newPayServer(backend lock.Backend) (*payServer, error) {
	// One request at a time per route, user and Idempotency-Key; the first
	// response is replayed for an hour. To lock per order, use
	// httplock.FromPathValue("id").
	mw, err := httplock.New(backend,
		httplock.FromIdempotencyKey(),     // the IETF draft's Idempotency-Key syntax
		httplock.WithScope(demohttp.User), // the authenticated user, never a header the client chooses
		httplock.WithTTL(ttl),
		httplock.WithReplay(replayTTL),
		// No WithWait: a busy key is answered 409 at once.
	)
	if err != nil {
		return nil, err
	}
	s := &payServer{burst: demohttp.NewBurst(burst, 2*time.Second)}
	mux := http.NewServeMux()
	mux.Handle("POST /orders/{id}/pay", mw(http.HandlerFunc(s.pay)))
	// Authentication goes in front of the lock, which reads the user.
	s.Server = httptest.NewServer(demohttp.Authenticate(mux))
	return s, nil
}

// pay is the payment handler: it records its run, works for a while under
// the lease and answers 201 with the lease's fence.
func (s *payServer) pay(w http.ResponseWriter, r *http.Request) {
	l, ok := lock.LeaseFrom(r.Context())
	if !ok {
		http.Error(w, "no lease", http.StatusInternalServerError)
		return
	}
	who, err := demohttp.User(r) // the payer, as authenticated
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	s.runs = append(s.runs, run{who, l.Fence})
	s.mu.Unlock()
	s.burst.Hold(r.Context())
	select {
	case <-time.After(work): // charge the card, passing l.Fence to fenced writes
	case <-r.Context().Done(): // the client left, or the lease was lost
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(payment{Order: r.PathValue("id"), User: who, Fence: l.Fence})
}

// payDemo is parts 1 to 3: the burst, the retries, and the key reused
// with another body and by another user.
func payDemo(ctx context.Context, w io.Writer, s *payServer) error {
	url := s.URL + "/orders/42/pay"
	key := http.Header{"Idempotency-Key": {idemKey}}
	header := demohttp.As(user, key)
	fmt.Fprintf(w, "Server: POST %s, behind authentication (Authorization: Bearer <user>),\n", url)
	fmt.Fprintf(w, "        locked on the user and the Idempotency-Key (TTL %v, no wait), responses replayed for %v\n", ttl, replayTTL)

	fmt.Fprintf(w, "\n== Part 1: %d concurrent duplicates (user %s, Idempotency-Key: %s) ==\n", burst, user, idemKey)
	replies, err := s.burst.Fire(ctx, s.Client(), http.MethodPost, url, header, body)
	if err != nil {
		return err
	}
	first, err := demohttp.CheckBurst(w, replies, http.StatusCreated)
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "\n== Part 2: %d retries (same user, key and body) ==\n", retries)
	if err := demohttp.Replays(ctx, w, s.Client(), http.MethodPost, url, header, body, retries, first); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n== Part 3: the same key, with another body, then from another user ==\n")
	if err := demohttp.KeyReused(ctx, w, s.Client(), url, header, key, user, other, body, http.StatusCreated, first); err != nil {
		return err
	}
	return s.checkRuns(w)
}

// checkRuns prints the handler's runs and checks that it ran once for
// alice and once for bob.
func (s *payServer) checkRuns(w io.Writer) error {
	s.mu.Lock()
	got := slices.Clone(s.runs)
	s.mu.Unlock()
	each := make([]string, len(got))
	for i, r := range got {
		each[i] = fmt.Sprintf("for %s under fence %s", r.user, r.fence)
	}
	fmt.Fprintf(w, "\nHandlers ran %d time(s): %s\n", len(got), strings.Join(each, ", "))
	if len(got) != 2 || got[0].user != user || got[1].user != other {
		return fmt.Errorf("handlers ran %d times (%v), want once for %s and once for %s", len(got), got, user, other)
	}
	fmt.Fprintf(w, "OK: one payment per user for %d requests, every 409 with Retry-After, retries replayed to their own user, the reused key refused\n", burst+retries+3)
	return nil
}

// exportServer serves two export routes behind authentication, each with
// a limit of exportLimit exports per user: POST /exports answers 429 over
// the limit, POST /exports/queued waits for a slot.
type exportServer struct {
	*httptest.Server

	// burst holds part 4's winners until the others are answered.
	burst       *demohttp.Burst
	now, queued demohttp.Gauge // the handlers running at once on each route
}

// newExportServer starts the export routes on a local server.
func newExportServer(backend lock.Backend) (*exportServer, error) {
	limited := func(opts ...httplock.Option) (func(http.Handler) http.Handler, error) {
		return httplock.New(backend, demohttp.User, append([]httplock.Option{ // a limit per authenticated user
			httplock.WithPrefix("exports:"),
			httplock.WithTTL(ttl),
			httplock.WithLimit(exportLimit), // a slot per export: at most 3 per user, across every instance
		}, opts...)...)
	}
	now, err := limited() // no wait: the 4th concurrent export is answered 429 at once
	if err != nil {
		return nil, err
	}
	// Waits for a slot instead; both routes share each user's 3 slots.
	queued, err := limited(httplock.WithWait(exportWait))
	if err != nil {
		return nil, err
	}
	s := &exportServer{burst: demohttp.NewLimitBurst(exports, exportLimit, 2*time.Second)}
	mux := http.NewServeMux()
	mux.Handle("POST /exports", now(s.exporter(&s.now, func(r *http.Request) { s.burst.Hold(r.Context()) })))
	mux.Handle("POST /exports/queued", queued(s.exporter(&s.queued, func(r *http.Request) {
		select {
		case <-time.After(exportWork):
		case <-r.Context().Done():
		}
	})))
	s.Server = httptest.NewServer(demohttp.Authenticate(mux))
	return s, nil
}

// exporter returns an export handler counted by g, which holds its slot
// while hold runs and answers 200 with the slot's fence.
func (s *exportServer) exporter(g *demohttp.Gauge, hold func(r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer g.Enter()()
		l, _ := lock.LeaseFrom(r.Context()) // the slot: a lease with a fence of its own
		who, _ := demohttp.User(r)
		hold(r) // export the user's data
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(export{User: who, Fence: l.Fence})
	})
}

// limitDemo is parts 4 and 5: at most exportLimit exports per user, on
// the same backend, answered 429 (part 4) or queued (part 5) over it.
func limitDemo(ctx context.Context, w io.Writer, backend lock.Backend) error {
	s, err := newExportServer(backend)
	if err != nil {
		return err
	}
	defer s.Close()
	header := demohttp.As(user, nil)

	fmt.Fprintf(w, "\n== Part 4: %d concurrent exports of one user (%s), at most %d at once ==\n", exports, user, exportLimit)
	replies, err := s.burst.Fire(ctx, s.Client(), http.MethodPost, s.URL+"/exports", header, "")
	if err != nil {
		return err
	}
	if err := demohttp.CheckLimited(w, replies, exportLimit, s.now.Peak()); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n== Part 5: %d concurrent exports of one user, waiting up to %v for a slot ==\n", exports, exportWait)
	replies, err = demohttp.Fire(ctx, s.Client(), http.MethodPost, s.URL+"/exports/queued", header, exports)
	if err != nil {
		return err
	}
	if err := demohttp.CheckLimited(w, replies, exportLimit, s.queued.Peak()); err != nil {
		return err
	}
	if got, want := demohttp.Tally(replies), fmt.Sprintf("200: %d", exports); got != want {
		return fmt.Errorf("waiting exports: tally %q, want %q", got, want)
	}
	fmt.Fprintf(w, "OK: never more than %d exports of a user at once, every 429 with Retry-After, every waiting export served\n", exportLimit)
	return nil
}
