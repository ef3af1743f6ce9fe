package httplock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
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

	// One request at a time per Idempotency-Key.
	mw, err := httplock.New(backend,
		httplock.WithKeyFunc(httplock.FromHeader("Idempotency-Key")),
		httplock.WithPrefix("orders:"))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /orders", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, _ := httplock.LeaseFrom(r.Context())
		// Pass l.Fence along with writes so a stale holder is rejected.
		fmt.Fprintf(w, "created under fence %s", l.Fence)
	})))

	post := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/orders", nil)
		req.Header.Set("Idempotency-Key", "3f6c")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	rec := post()
	fmt.Println(rec.Code, rec.Body)

	// While another instance holds the key, the request is turned away.
	l, err := backend.Acquire(context.Background(), "orders:3f6c", 10*time.Second)
	if err != nil {
		panic(err)
	}
	rec = post()
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), "Retry-After:", rec.Header().Get("Retry-After"))
	_ = backend.Release(context.Background(), l.ID)
	// Output:
	// 200 created under fence 000000000000001
	// 409 application/problem+json Retry-After: 10
}

func ExampleCompose() {
	// The lock key is "<tenant>:<order id>" from the route pattern's wildcards.
	key := httplock.Compose(httplock.FromPathValue("tenant"), httplock.FromPathValue("id"))
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /{tenant}/orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		k, err := key(r)
		fmt.Println(k, err)
	})
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/acme/orders/42", nil))
	// Output: acme:42 <nil>
}
