package echolock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
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

	// While another instance holds the key, the request is turned away.
	l, err := backend.Acquire(context.Background(), "42", 10*time.Second)
	if err != nil {
		panic(err)
	}
	rec = pay()
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), "Retry-After:", rec.Header().Get("Retry-After"))
	_ = backend.Release(context.Background(), l.ID)
	// Output:
	// 200 paid under fence 000000000000001
	// 409 application/problem+json Retry-After: 10
}

// A group of routes locked per tenant and Idempotency-Key, waiting up to
// two seconds for a busy key; reads are not locked.
func ExampleConfig() {
	var backend lock.Backend // such as redisbackend.New(client, nil)
	var createPayment echo.HandlerFunc

	e := echo.New()
	g := e.Group("/tenants/:tenant", echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyExtractor: echolock.Compose(echolock.FromParam("tenant"), echolock.FromHeader("Idempotency-Key")),
		Prefix:       "payments:",
		TTL:          10 * time.Second,
		Wait:         2 * time.Second,
		Skipper:      func(c echo.Context) bool { return c.Request().Method == http.MethodGet },
	}))
	g.POST("/payments", createPayment)
}
