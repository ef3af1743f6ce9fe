package echolock_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/labstack/echo/v5"
	"github.com/redis/go-redis/v9"

	echolock "github.com/syncguard-go/syncguard/middleware/echo/v5"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/redisbackend"
)

func Example() {
	mr, err := miniredis.Run() // an embedded Redis; use a real one in production
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	backend, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}

	e := echo.New()
	// One request at a time per order id.
	e.POST("/orders/:id/pay", func(c *echo.Context) error {
		l, _ := echolock.LeaseFrom(c)
		// Pass l.Fence along with writes so a stale holder is rejected.
		return c.String(http.StatusOK, "paid under fence "+string(l.Fence))
	}, echolock.New(backend, echolock.FromParam("id")))

	pay := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/orders/42/pay", nil))
		return rec
	}
	rec := pay()
	fmt.Println(rec.Code, rec.Body)

	// While another instance holds the key, the middleware sets
	// Retry-After and returns an *echo.HTTPError (409, wrapping the lock
	// error) that e.HTTPErrorHandler renders.
	l, err := backend.Acquire(context.Background(), `POST /orders/\:id/pay::42`, 30*time.Second)
	if err != nil {
		panic(err)
	}
	rec = pay()
	fmt.Print(rec.Code, " Retry-After: ", rec.Header().Get("Retry-After"), " ", rec.Body)
	_ = backend.Release(context.Background(), l.ID)
	// Output:
	// 200 paid under fence 000000000000001
	// 409 Retry-After: 1 {"message":"Another request holds the lock for this resource. Retry after 1s."}
}

// Replay mode: the first request with an Idempotency-Key runs and its
// response is stored; a retry gets it back without running the handler;
// the same key with another body is refused, here as RFC 9457 problem
// details by Echo's own ProblemDetailsHTTPErrorHandler. Keys belong to
// the authenticated user (Config.Scope).
func ExampleReplayConfig() {
	mr, err := miniredis.Run() // an embedded Redis; use a real one in production
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	backend, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}),
		&redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		panic(err)
	}
	runs := 0
	e := echo.New()
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false)
	e.Use(authenticate)
	e.POST("/orders", func(c *echo.Context) error {
		runs++
		return c.JSON(http.StatusCreated, map[string]int{"id": runs})
	}, echolock.NewWithConfig(echolock.Config{
		Backend:   backend,
		KeyLookup: "idempotency:Idempotency-Key", // the draft standard's header syntax
		Scope:     userID,                        // the user your authentication middleware established
		Replay:    &echolock.ReplayConfig{},      // 24h, the default headers and limits
	}))
	post := func(user, body string) {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		req.Header.Set(echo.HeaderAuthorization, "Bearer "+user)
		req.Header.Set("Idempotency-Key", "3f6c")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		fmt.Print(user, " ", rec.Code, " ", rec.Header().Get(guard.HeaderReplayed), " ", rec.Body)
	}
	post("alice", `{"item":"book"}`) // runs
	post("alice", `{"item":"book"}`) // a retry: replayed
	post("bob", `{"item":"book"}`)   // another user's key: a run of its own
	post("alice", `{"item":"pen"}`)  // the key reused for another request: 422
	fmt.Println("handler runs:", runs)
	// Output:
	// alice 201  {"id":1}
	// alice 201 true {"id":1}
	// bob 201  {"id":2}
	// alice 422  {"type":"urn:syncguard:problem:idempotency-key-reused","title":"Idempotency key reused","status":422,"detail":"A response is stored for this key, for a different request (method, route, URI or body). Use a new key for a new request."}
	// handler runs: 2
}

// authenticate stands in for your authentication middleware: it accepts
// "Authorization: Bearer <user>" (a real one verifies a token) and sets
// the user on the context; anything else is answered 401.
func authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		user, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
		if !ok || user == "" {
			return echo.ErrUnauthorized
		}
		c.Set("user", user)
		return next(c)
	}
}

// userID is the scope of a request: the user that authenticate
// established, never a header the client chooses.
func userID(c *echo.Context) (string, error) {
	user, ok := c.Get("user").(string)
	if !ok {
		return "", errors.New("not authenticated")
	}
	return user, nil
}
