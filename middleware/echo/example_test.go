package echolock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	echolock "github.com/syncguard-go/syncguard/middleware/echo"
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
	e.POST("/orders/:id/pay", func(c echo.Context) error {
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

	// While another instance holds the key, the request is turned away:
	// the middleware returns an *echo.HTTPError (409, with the lock error
	// as Internal) and sets Retry-After; e.HTTPErrorHandler renders it.
	// The lock key is the route (":" escaped), an empty scope and the id. Retry-After is 1:
	// the holder's lease has 30s left (a live holder's heartbeat keeps it
	// above half the TTL), but this route's handlers hold the lock for well
	// under a second.
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

// A group of routes locked per tenant and Idempotency-Key, waiting up to
// two seconds for a busy key; reads are not locked; the answers that do
// not reach the handler are RFC 9457 problem details.
func ExampleConfig() {
	var client *redis.Client
	var createPayment echo.HandlerFunc

	// An Idempotency-Key per request makes the key space unbounded, and a
	// per-key fence counter stays in Redis forever: striped counters
	// bound them to FenceStripes (a key's fences still strictly increase).
	backend, err := redisbackend.New(client, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	g := e.Group("/tenants/:tenant", echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyLookup:    "param:tenant,header:Idempotency-Key",
		Prefix:       "payments:",
		TTL:          10 * time.Second,
		Wait:         2 * time.Second,
		Skipper:      func(c echo.Context) bool { return c.Request().Method == http.MethodGet },
		BusyHandler:  echolock.ProblemBusyHandler,
		ErrorHandler: echolock.ProblemErrorHandler,
	}))
	g.POST("/payments", createPayment)
}

// Replay mode: the first request with an Idempotency-Key runs and its
// response is stored; retries get it back without running the handler;
// Replay mode: the first request with an Idempotency-Key runs and its
// response is stored; retries get it back without running the handler;
// the same key with another body is refused. Keys belong to the
// authenticated user (Config.Scope): another user sending the same key
// gets a run of their own, never the first user's response.
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
	e.Use(authenticate)
	e.POST("/orders", func(c echo.Context) error {
		runs++
		c.Response().Header().Set(echo.HeaderLocation, fmt.Sprintf("/orders/%d", runs))
		return c.JSON(http.StatusCreated, map[string]int{"id": runs})
	}, echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyLookup:    "idempotency:Idempotency-Key", // the draft standard's header syntax
		Scope:        userID,                        // the user your authentication middleware established
		Replay:       &echolock.ReplayConfig{},      // 24h, the default headers and limits
		ErrorHandler: echolock.ProblemErrorHandler,
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

// authenticate stands in for your authentication middleware (such as
// echo-jwt): it accepts "Authorization: Bearer <user>" (a real one
// verifies a token) and sets the user on the context; anything else is
// answered 401.
func authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		user, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
		if !ok || user == "" {
			return echo.ErrUnauthorized
		}
		c.Set("user", user)
		return next(c)
	}
}

// userID is the scope (or the key) of a request: the user that
// authenticate established, never a header the client chooses.
func userID(c echo.Context) (string, error) {
	user, ok := c.Get("user").(string)
	if !ok {
		return "", errors.New("not authenticated")
	}
	return user, nil
}

// At most two exports per user at once, across every instance and every
// route that uses the middleware: a third concurrent export of the same
// user gets an *echo.HTTPError with 429 Too Many Requests (Retry-After set
// on the response), which Echo's HTTPErrorHandler renders; another user
// has slots of their own. The key is the authenticated user; a limit
// leaves the route out of its key, so both routes count against one limit.
func ExampleConfig_limit() {
	mr, err := miniredis.Run() // an embedded Redis; use a real one in production
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	backend, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	exports := echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyExtractor: userID, // the authenticated user
		Prefix:       "exports:",
		TTL:          10 * time.Second,
		Limit:        2,
	})
	export := func(c echo.Context) error {
		if user, _ := userID(c); user == "alice" {
			inside <- struct{}{}
			<-release // a long export
		}
		return c.String(http.StatusOK, "exported")
	}
	e := echo.New()
	e.Use(authenticate)
	e.POST("/exports", export, exports)
	e.POST("/reports/:id/export", export, exports)
	post := func(user, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.Header.Set(echo.HeaderAuthorization, "Bearer "+user)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}

	done := make(chan int)
	go func() { done <- post("alice", "/exports").Code }()
	go func() { done <- post("alice", "/reports/7/export").Code }()
	<-inside
	<-inside
	rec := post("alice", "/reports/8/export") // a third one, on either route; Retry-After 1: no export has finished here yet
	fmt.Print(rec.Code, " Retry-After: ", rec.Header().Get("Retry-After"), " ", rec.Body)
	rec = post("bob", "/exports")
	fmt.Println("bob:", rec.Code, rec.Body)
	close(release)
	fmt.Println("alice:", <-done, <-done)
	// Output:
	// 429 Retry-After: 1 {"message":"The limit of concurrent requests for this resource is reached. Retry after 1s."}
	// bob: 200 exported
	// alice: 200 200
}
