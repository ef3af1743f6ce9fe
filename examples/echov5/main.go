// Echov5 shows echolock on Echo v5 (middleware/echo/v5): a burst of
// duplicates on one order, then replay mode on an Idempotency-Key.
//
//  1. A burst, on POST /orders/:id/pay (echolock.FromParam("id")): 10
//     identical requests at the same moment. One runs (200, with its
//     lease's fence); the other 9 get 409 Conflict with Retry-After,
//     rendered by Echo's HTTPErrorHandler from the middleware's
//     *echo.HTTPError.
//  2. Replay, on POST /orders (KeyLookup "idempotency:Idempotency-Key",
//     Config.Scope the authenticated user, Config.Replay): the first
//     request runs (201); 3 retries get its response back without running
//     the handler; the same key with another body gets 422, as RFC 9457
//     problem details from echo.ProblemDetailsHTTPErrorHandler; bob
//     sending alice's key gets a run of his own.
//
// It runs on an embedded Redis (miniredis) unless REDIS_URL is set:
//
//	go run ./examples/echov5
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/echov5
//
// It exits non-zero when the library misbehaves.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/examples/internal/demohttp"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo/v5"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const (
	burst   = 10                    // concurrent duplicates in part 1
	retries = 3                     // part 2's retries
	idemKey = `"order-7-attempt-1"` // part 2's Idempotency-Key
	user    = "alice"               // who sends every request, unless said otherwise
	other   = "bob"                 // who sends alice's key and body in part 2
)

func main() { demorun.Main("echov5 demo", demo) }

// app is the Echo v5 application of the demo, with what its handlers saw.
type app struct {
	*httptest.Server // a real listener on 127.0.0.1

	burst *demohttp.Burst
	mu    sync.Mutex
	paid  []lock.Fence // part 1's runs
	ran   []string     // the users part 2's handler ran for
}

func demo(ctx context.Context, env *demorun.Env) error {
	backend, err := env.Backend("echolock-v5-demo")
	if err != nil {
		return err
	}
	// Idempotency keys are one per request: striped fence counters, under
	// a prefix of their own (replay refuses a counter per key).
	idem, err := env.BackendWith("echolock-v5-demo-idem", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return err
	}
	a := &app{burst: demohttp.NewBurst(burst, 2*time.Second)}
	e := echo.New()
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false) // refusals as RFC 9457 problems
	e.Use(echo.WrapMiddleware(demohttp.Authenticate))
	e.POST("/orders/:id/pay", a.pay, echolock.New(backend, echolock.FromParam("id")))
	replay, err := echolock.Config{
		Backend:   idem,
		KeyLookup: "idempotency:Idempotency-Key",
		Scope:     func(c *echo.Context) (string, error) { return demohttp.User(c.Request()) },
		Replay:    &echolock.ReplayConfig{},
	}.ToMiddleware()
	if err != nil {
		return err
	}
	e.POST("/orders", a.create, replay)
	a.Server = httptest.NewServer(e)
	defer a.Close()
	if err := a.burstPart(ctx, env.Out); err != nil {
		return fmt.Errorf("part 1: %w", err)
	}
	if err := a.replayPart(ctx, env.Out); err != nil {
		return fmt.Errorf("part 2: %w", err)
	}
	fmt.Fprintf(env.Out, "\nOK: one payment per burst, retries replayed to their own user only\n")
	return nil
}

// pay runs under the order's lease until the burst's duplicates are
// answered, and answers 200 with its fence.
func (a *app) pay(c *echo.Context) error {
	l, _ := echolock.LeaseFrom(c)
	a.mu.Lock()
	a.paid = append(a.paid, l.Fence)
	a.mu.Unlock()
	a.burst.Hold(c.Request().Context())
	return c.JSON(http.StatusOK, map[string]any{"fence": l.Fence})
}

// create answers 201 for the authenticated user, with its fence.
func (a *app) create(c *echo.Context) error {
	l, _ := echolock.LeaseFrom(c)
	who, err := demohttp.User(c.Request())
	if err != nil {
		return echo.ErrUnauthorized
	}
	a.mu.Lock()
	a.ran = append(a.ran, who)
	a.mu.Unlock()
	return c.JSON(http.StatusCreated, map[string]any{"user": who, "fence": l.Fence})
}

func (a *app) burstPart(ctx context.Context, w io.Writer) error {
	url := a.URL + "/orders/42/pay"
	fmt.Fprintf(w, "\n== Part 1: %d concurrent duplicates (POST %s) ==\n", burst, url)
	replies, err := a.burst.Fire(ctx, a.Client(), http.MethodPost, url, demohttp.As(user, nil), "")
	if err != nil {
		return err
	}
	if _, err := demohttp.CheckBurst(w, replies, http.StatusOK); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(w, "Handler ran %d time(s), under fence %s\n", len(a.paid), demohttp.JoinFences(a.paid))
	if len(a.paid) != 1 {
		return fmt.Errorf("handler ran %d times, want once", len(a.paid))
	}
	return nil
}

func (a *app) replayPart(ctx context.Context, w io.Writer) error {
	url := a.URL + "/orders"
	key := http.Header{"Idempotency-Key": {idemKey}}
	const order = `{"item":"book"}`
	fmt.Fprintf(w, "\n== Part 2: replay (POST %s, user %s, Idempotency-Key: %s) ==\n", url, user, idemKey)
	first, err := demohttp.SendBody(ctx, a.Client(), http.MethodPost, url, demohttp.As(user, key), order)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  request:  %s\n", first)
	if first.Status != http.StatusCreated || first.Replayed {
		return fmt.Errorf("first request %s, want a run's 201", first)
	}
	if err := demohttp.Replays(ctx, w, a.Client(), http.MethodPost, url, demohttp.As(user, key), order, retries, first); err != nil {
		return err
	}
	reused, err := demohttp.SendBody(ctx, a.Client(), http.MethodPost, url, demohttp.As(user, key), `{"item":"pen"}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-23s %s\n", user+", another body:", reused)
	if reused.Status != http.StatusUnprocessableEntity {
		return fmt.Errorf("reused key %s, want 422", reused)
	}
	if err := demohttp.OtherUser(ctx, w, a.Client(), other, http.MethodPost, url, key, order, http.StatusCreated, first); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(w, "Handler ran for %v\n", a.ran)
	if !slices.Equal(a.ran, []string{user, other}) {
		return fmt.Errorf("handler ran for %q, want once for %s and once for %s", a.ran, user, other)
	}
	return nil
}
