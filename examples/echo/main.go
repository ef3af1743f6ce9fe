// Echo shows echolock guarding Echo v4 routes, as alice unless said
// otherwise:
//
//  1. No wait: of 10 identical requests, one is served, 9 get 409.
//  2. Config.Wait: 5 concurrent requests are served one at a time.
//  3. Replay: 3 retries get the first response; another body gets 422;
//     bob's request with alice's key runs as his own.
//
// It runs on an embedded Redis, or on REDIS_URL under a random prefix, and
// exits non-zero when the library misbehaves.
//
//	make demo        # or: go run ./examples/echo
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/echo
package main

import (
	"context"
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

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const (
	burst      = 10 // concurrent duplicates in part 1
	sequential = 3  // sequential duplicates in part 1
	waiters    = 5  // concurrent requests in part 2
	work       = 200 * time.Millisecond
	ttl        = 10 * time.Second
	wait       = 3 * time.Second // part 2's wait for a busy key
	retries    = 3
	idemKey    = `"order-7-attempt-1"` // an sf-string
	user       = "alice"
	other      = "bob"
)

func main() { demorun.Main("echo demo", demo) }

// result is the body of a 200 or 201 answer.
type result struct {
	Order string     `json:"order"`
	User  string     `json:"user,omitempty"` // whom it was made for (part 3)
	Fence lock.Fence `json:"fence"`
}

// authUser is the scope of part 3's keys: the authenticated user.
func authUser(c echo.Context) (string, error) { return demohttp.User(c.Request()) }

// handlerLog records what the handlers saw.
type handlerLog struct {
	mu         sync.Mutex
	fences     []lock.Fence // in the order the handlers started
	running    int
	maxRunning int // most handlers running at once

	// burst holds the winner until its duplicates are answered.
	burst *demohttp.Burst
}

// handler returns an Echo handler that works for a while under the lease
// and answers 200 with its fence.
func (h *handlerLog) handler(c echo.Context) error {
	l, ok := echolock.LeaseFrom(c)
	if !ok {
		return echo.NewHTTPError(http.StatusInternalServerError, "no lease")
	}
	h.mu.Lock()
	h.fences = append(h.fences, l.Fence)
	h.running++
	h.maxRunning = max(h.maxRunning, h.running)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.running--
		h.mu.Unlock()
	}()
	ctx := c.Request().Context()
	if h.burst != nil {
		h.burst.Hold(ctx)
	}
	select {
	case <-time.After(work): // the work, passing l.Fence to fenced writes
	case <-ctx.Done(): // the client left, or the lease was lost
		return context.Cause(ctx)
	}
	return c.JSON(http.StatusOK, result{Order: c.Param("id"), Fence: l.Fence})
}

// demo runs the three parts on the locked routes of one server.
func demo(ctx context.Context, env *demorun.Env) error {
	w := env.Out
	backend, err := env.Backend("echolock-demo")
	if err != nil {
		return err
	}
	// Idempotency keys are one per request: striped fence counters, under
	// a prefix of their own (replay refuses a counter per key).
	idem, err := env.BackendWith("echolock-demo-idem", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return err
	}
	s := newServer(backend, idem)
	defer s.Close()
	if err := s.noWait(ctx, w); err != nil {
		return fmt.Errorf("part 1: %w", err)
	}
	if err := s.waiting(ctx, w); err != nil {
		return fmt.Errorf("part 2: %w", err)
	}
	if err := s.replay(ctx, w); err != nil {
		return fmt.Errorf("part 3: %w", err)
	}
	fmt.Fprintf(w, "\nOK: one payment per burst, every waiting request served in turn, fences strictly increasing, retries replayed to their own user only\n")
	return nil
}

// server is the Echo app of the demo on a local listener, with what its
// handlers saw.
type server struct {
	*httptest.Server // in production, e.Start(addr)

	pays, patches handlerLog // parts 1 and 2

	mu         sync.Mutex
	createdFor []string // the users part 3's handler ran for
}

// newServer starts the three locked routes behind authentication.
func newServer(backend, idem lock.Backend) *server {
	s := &server{pays: handlerLog{burst: demohttp.NewBurst(burst, 2*time.Second)}}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// Authentication in front of every route.
	e.Use(echo.WrapMiddleware(demohttp.Authenticate))
	// One request at a time per order, a busy order answered 409 at once
	// through e.HTTPErrorHandler.
	e.POST("/orders/:id/pay", s.pays.handler, echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyExtractor: echolock.FromParam("id"),
		TTL:          ttl,
	}))
	// One request at a time per order, a busy order waited for. The
	// prefix keeps these keys apart from the pay route's.
	e.PATCH("/orders/:id", s.patches.handler, echolock.NewWithConfig(echolock.Config{
		Backend:   backend,
		KeyLookup: "param:id",
		Prefix:    "patch:",
		TTL:       ttl,
		Wait:      wait,
	}))
	// Replay: the first response per user and Idempotency-Key is replayed
	// to that user's retries, on the backend with striped fences.
	e.POST("/orders", s.createOrder, echolock.NewWithConfig(echolock.Config{
		Backend:   idem,
		KeyLookup: "idempotency:Idempotency-Key", // the IETF draft's Idempotency-Key syntax
		Scope:     authUser,                      // the authenticated user, never a header the client chooses
		TTL:       ttl,
		Replay:    &echolock.ReplayConfig{},
	}))
	s.Server = httptest.NewServer(e)
	return s
}

// createOrder is part 3's handler: it records whom it ran for and answers
// 201 with the lease's fence.
func (s *server) createOrder(c echo.Context) error {
	l, _ := echolock.LeaseFrom(c)
	who, err := authUser(c) // the buyer, as authenticated
	if err != nil {
		return echo.ErrUnauthorized
	}
	s.mu.Lock()
	s.createdFor = append(s.createdFor, who)
	s.mu.Unlock()
	return c.JSON(http.StatusCreated, result{Order: "7", User: who, Fence: l.Fence})
}

// noWait is part 1: a burst of duplicates on the pay route, then a few
// one after the other.
func (s *server) noWait(ctx context.Context, w io.Writer) error {
	url := s.URL + "/orders/42/pay"
	auth := demohttp.As(user, nil)
	fmt.Fprintf(w, "\n== Part 1: no wait (POST %s, TTL %v) ==\n", url, ttl)
	fmt.Fprintf(w, "%d concurrent duplicates:\n", burst)
	replies, err := s.pays.burst.Fire(ctx, s.Client(), http.MethodPost, url, auth, "")
	if err != nil {
		return err
	}
	won, err := demohttp.CheckBurst(w, replies, http.StatusOK)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d sequential duplicates (lock free again):\n", sequential)
	if err := demohttp.Sequential(ctx, w, s.Client(), http.MethodPost, url, auth, sequential, won.Fence); err != nil {
		return err
	}
	return s.pays.check(w, 1+sequential)
}

// waiting is part 2: concurrent requests on one order wait their turn.
func (s *server) waiting(ctx context.Context, w io.Writer) error {
	url := s.URL + "/orders/43"
	fmt.Fprintf(w, "\n== Part 2: waiting (PATCH %s, Wait %v) ==\n", url, wait)
	fmt.Fprintf(w, "%d concurrent requests on one order:\n", waiters)
	start := time.Now()
	replies, err := demohttp.Fire(ctx, s.Client(), http.MethodPatch, url, demohttp.As(user, nil), waiters)
	if err != nil {
		return err
	}
	for i, r := range replies {
		fmt.Fprintf(w, "  request %2d: %s\n", i+1, r)
	}
	got := demohttp.Tally(replies)
	fmt.Fprintf(w, "  tally: %s (in %v: one at a time, %v each)\n", got, time.Since(start).Round(100*time.Millisecond), work)
	if want := fmt.Sprintf("200: %d", waiters); got != want {
		return fmt.Errorf("tally %q, want %q", got, want)
	}
	return s.patches.check(w, waiters)
}

// replay is part 3: a request, its retries, its key reused with another
// body and by another user.
func (s *server) replay(ctx context.Context, w io.Writer) error {
	url := s.URL + "/orders"
	key := http.Header{"Idempotency-Key": {idemKey}}
	header := demohttp.As(user, key)
	const order = `{"item":"book"}`
	fmt.Fprintf(w, "\n== Part 3: replay (POST %s, user %s, Idempotency-Key: %s) ==\n", url, user, idemKey)
	first, err := demohttp.SendBody(ctx, s.Client(), http.MethodPost, url, header, order)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  request:  %s\n", first)
	if first.Status != http.StatusCreated || first.Replayed {
		return fmt.Errorf("first request %s, want a run's 201", first)
	}
	if err := demohttp.Replays(ctx, w, s.Client(), http.MethodPost, url, header, order, retries, first); err != nil {
		return err
	}
	reused, err := demohttp.SendBody(ctx, s.Client(), http.MethodPost, url, header, `{"item":"pen"}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-23s %s\n", user+", another body:", reused)
	if reused.Status != http.StatusUnprocessableEntity {
		return fmt.Errorf("reused key %s, want 422", reused)
	}
	if err := demohttp.OtherUser(ctx, w, s.Client(), other, http.MethodPost, url, key, order, http.StatusCreated, first); err != nil {
		return err
	}
	s.mu.Lock()
	ran := slices.Clone(s.createdFor)
	s.mu.Unlock()
	fmt.Fprintf(w, "Handler ran %d time(s) for %d requests: for %s\n", len(ran), retries+4, strings.Join(ran, ", for "))
	if !slices.Equal(ran, []string{user, other}) {
		return fmt.Errorf("handler ran for %q, want once for %s and once for %s", ran, user, other)
	}
	return nil
}

// check prints what the handlers saw and checks that they ran n times,
// never two at once, under strictly increasing fences.
func (h *handlerLog) check(w io.Writer, n int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(w, "Handlers ran %d times, at most %d at once, under fences %s\n",
		len(h.fences), h.maxRunning, demohttp.JoinFences(h.fences))
	if len(h.fences) != n {
		return fmt.Errorf("handlers ran %d times, want %d", len(h.fences), n)
	}
	if h.maxRunning != 1 {
		return fmt.Errorf("%d handlers ran at once, want 1", h.maxRunning)
	}
	for i := 1; i < len(h.fences); i++ {
		if h.fences[i].Compare(h.fences[i-1]) <= 0 {
			return fmt.Errorf("fence %s follows %s", h.fences[i], h.fences[i-1])
		}
	}
	return nil
}
