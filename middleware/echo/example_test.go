package echolock_test

import (
	"context"
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
	// The lock key is the route (':' escaped) and the id. Retry-After is 1:
	// the holder's lease has 10s left, but this route's handlers hold the
	// lock for well under a second.
	l, err := backend.Acquire(context.Background(), `POST /orders/\:id/pay:42`, 10*time.Second)
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
// the same key with another body is refused.
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
	e.POST("/orders", func(c echo.Context) error {
		runs++
		c.Response().Header().Set(echo.HeaderLocation, "/orders/1")
		return c.JSON(http.StatusCreated, map[string]int{"id": 1, "run": runs})
	}, echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyLookup:    "header:Idempotency-Key",
		Replay:       &echolock.ReplayConfig{}, // 24h, the default headers and limits
		ErrorHandler: echolock.ProblemErrorHandler,
	}))
	post := func(body string) {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		req.Header.Set("Idempotency-Key", "3f6c")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Header().Get(echolock.HeaderReplayed), " ", rec.Body)
	}
	post(`{"item":"book"}`) // runs
	post(`{"item":"book"}`) // a retry: replayed
	post(`{"item":"pen"}`)  // the key reused for another request: 422
	fmt.Println("handler runs:", runs)
	// Output:
	// 201  {"id":1,"run":1}
	// 201 true {"id":1,"run":1}
	// 422  {"type":"urn:syncguard:problem:idempotency-key-reused","title":"Idempotency key reused","status":422,"detail":"A response is stored for this key, for a different request (method, route, URI or body). Use a new key for a new request."}
	// handler runs: 1
}

// At most two exports per user at once, across every instance: a third
// concurrent export of the same user gets an *echo.HTTPError with 429 Too
// Many Requests (Retry-After set on the response), which Echo's
// HTTPErrorHandler renders; another user has slots of their own.
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
	e := echo.New()
	e.POST("/users/:user/exports", func(c echo.Context) error {
		if c.Param("user") == "alice" {
			inside <- struct{}{}
			<-release // a long export
		}
		return c.String(http.StatusOK, "exported")
	}, echolock.NewWithConfig(echolock.Config{
		Backend:   backend,
		KeyLookup: "param:user",
		TTL:       10 * time.Second,
		Limit:     2,
	}))
	export := func(user string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/users/"+user+"/exports", nil))
		return rec
	}

	done := make(chan int)
	for range 2 { // alice's two exports take both her slots
		go func() { done <- export("alice").Code }()
	}
	<-inside
	<-inside
	rec := export("alice") // a third one
	fmt.Print(rec.Code, " Retry-After: ", rec.Header().Get("Retry-After"), " ", rec.Body)
	rec = export("bob")
	fmt.Println("bob:", rec.Code, rec.Body)
	close(release)
	fmt.Println("alice:", <-done, <-done)
	// Output:
	// 429 Retry-After: 10 {"message":"The limit of concurrent requests for this resource is reached. Retry after 10s."}
	// bob: 200 exported
	// alice: 200 200
}
