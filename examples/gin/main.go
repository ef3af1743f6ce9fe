// Gin shows ginlock in replay mode guarding a gin route: POST
// /orders/:id/pay is locked on the Idempotency-Key of the user who sends
// it, and its first response (rendered with c.JSON) is stored and
// replayed byte for byte.
//
// The user comes from the authentication in front of the engine
// (demohttp.Authenticate, a stand-in that accepts "Authorization: Bearer
// <user>"); ginlock.WithScope reads it from the request's context, never
// from a header the client chooses. Every request is alice's unless said
// otherwise.
//
//  1. A burst: 10 identical requests fire at the same moment. One runs
//     (201, with its lease's fence); the other 9 are aborted at once with
//     409 Conflict and a Retry-After header, the refusal on c.Errors.
//  2. Three retries: each gets the first response back (Idempotent-
//     Replayed: true) without running the handler.
//  3. The same key with another body: 422. Then bob sends alice's key and
//     body: his key is his own, so his payment runs, and his retry
//     replays his.
//
// It runs on an embedded Redis (miniredis) unless REDIS_URL is set:
//
//	go run ./examples/gin
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/gin
//
// It exits non-zero when the library misbehaves.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/examples/internal/demohttp"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/lock"
	ginlock "github.com/syncguard-go/syncguard/middleware/gin"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const (
	burst   = 10                     // concurrent duplicates in part 1
	retries = 3                      // retries one after the other in part 2
	work    = 200 * time.Millisecond // how long the handler takes
	idemKey = `"pay-42-attempt-1"`   // the Idempotency-Key (an sf-string, as the IETF draft has it)
	body    = `{"amount":"12.50"}`   // the payment every request asks for
	user    = "alice"                // who sends every request, unless said otherwise
	other   = "bob"                  // who sends alice's key and body in part 3
)

func main() { demorun.Main("gin demo", demo) }

// server is the gin engine behind authentication, on a local listener.
type server struct {
	*httptest.Server
	burst   *demohttp.Burst
	runs    atomic.Int32
	mu      sync.Mutex
	refused []string // the c.Errors of refused requests
}

func demo(ctx context.Context, env *demorun.Env) error {
	backend, err := env.BackendWith("ginlock-demo", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return err
	}
	s, err := newServer(backend)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.run(ctx, env.Out)
}

func newServer(backend lock.Backend) (*server, error) {
	mw, err := ginlock.New(backend,
		ginlock.FromIdempotencyKey(),
		ginlock.WithScope(func(c *gin.Context) (string, error) { return demohttp.User(c.Request) }),
		ginlock.WithReplay(time.Hour))
	if err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	s := &server{burst: demohttp.NewBurst(burst, 2*time.Second)}
	r := gin.New()
	r.Use(gin.Recovery(), s.recordErrors)
	r.POST("/orders/:id/pay", mw, s.pay)
	s.Server = httptest.NewServer(demohttp.Authenticate(r))
	return s, nil
}

// recordErrors keeps what ginlock put on c.Errors, as a logger would.
func (s *server) recordErrors(c *gin.Context) {
	c.Next()
	if c.IsAborted() && len(c.Errors) > 0 {
		s.mu.Lock()
		s.refused = append(s.refused, c.Errors.Last().Error())
		s.mu.Unlock()
	}
}

// pay charges the card under the lease and answers with its fence.
func (s *server) pay(c *gin.Context) {
	l, _ := ginlock.LeaseFrom(c)
	who, _ := demohttp.User(c.Request)
	s.runs.Add(1)
	s.burst.Hold(c.Request.Context())
	select {
	case <-time.After(work): // pass l.Fence to fenced writes
	case <-c.Request.Context().Done():
		return
	}
	c.JSON(http.StatusCreated, gin.H{"order": c.Param("id"), "user": who, "fence": l.Fence})
}

func (s *server) run(ctx context.Context, w io.Writer) error {
	url := s.URL + "/orders/42/pay"
	key := http.Header{"Idempotency-Key": {idemKey}}
	header := demohttp.As(user, key)
	fmt.Fprintf(w, "gin: POST %s, locked on the user and the Idempotency-Key, responses replayed\n", url)

	fmt.Fprintf(w, "\n== Part 1: %d concurrent duplicates ==\n", burst)
	replies, err := s.burst.Fire(ctx, s.Client(), http.MethodPost, url, header, body)
	if err != nil {
		return err
	}
	first, err := demohttp.CheckBurst(w, replies, http.StatusCreated)
	if err != nil {
		return err
	}
	s.mu.Lock()
	fmt.Fprintf(w, "  c.Errors of the refused: %d, such as %q\n", len(s.refused), s.refused[0])
	s.mu.Unlock()

	fmt.Fprintf(w, "\n== Part 2: %d retries ==\n", retries)
	if err := demohttp.Replays(ctx, w, s.Client(), http.MethodPost, url, header, body, retries, first); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n== Part 3: the key reused, then another user ==\n")
	if err := demohttp.KeyReused(ctx, w, s.Client(), url, header, key, user, other, body, http.StatusCreated, first); err != nil {
		return err
	}
	if n := s.runs.Load(); n != 2 {
		return fmt.Errorf("the handler ran %d times, want once per user", n)
	}
	fmt.Fprintf(w, "\nOK: the handler ran twice (alice, bob) for %d requests\n", burst+retries+3)
	return nil
}
