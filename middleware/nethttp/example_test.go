package httplock_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
)

func Example() {
	mr, err := miniredis.Run() // an embedded Redis; use a real one in production
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	// An Idempotency-Key per request makes the key space unbounded, and a
	// per-key fence counter stays in Redis forever: striped counters bound
	// them to FenceStripes (a key's fences still strictly increase, but no
	// longer count 1, 2, 3).
	backend, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}),
		&redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
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
	var fences []lock.Fence
	mux := http.NewServeMux()
	mux.Handle("POST /orders", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, _ := lock.LeaseFrom(r.Context())
		// Pass l.Fence along with writes so a stale holder is rejected.
		fences = append(fences, l.Fence)
		fmt.Fprint(w, "created")
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
	// The lock key is the prefix, the route and the Idempotency-Key.
	// Retry-After is 1: the holder's lease has 10s left, but this route's
	// handlers hold the lock for well under a second.
	l, err := backend.Acquire(context.Background(), "orders:POST /orders:3f6c", 10*time.Second)
	if err != nil {
		panic(err)
	}
	rec = post()
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), "Retry-After:", rec.Header().Get("Retry-After"))
	_ = backend.Release(context.Background(), l.ID)

	rec = post()
	fmt.Println(rec.Code, rec.Body)
	fmt.Println("fence increased:", fences[1].Compare(fences[0]) > 0)
	// Output:
	// 200 created
	// 409 application/problem+json Retry-After: 1
	// 200 created
	// fence increased: true
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

// Replay mode: the first request with an Idempotency-Key runs and its
// response is stored; retries get it back without running the handler;
// the same key with another body is refused.
func ExampleWithReplay() {
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
	mw, err := httplock.New(backend,
		httplock.WithKeyFunc(httplock.FromHeader("Idempotency-Key")),
		httplock.WithReplay(httplock.DefaultReplayTTL))
	if err != nil {
		panic(err)
	}
	runs := 0
	mux := http.NewServeMux()
	mux.Handle("POST /orders", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/orders/1")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":1,"run":%d}`, runs)
	})))
	post := func(body string) {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		req.Header.Set("Idempotency-Key", "3f6c")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Println(rec.Code, rec.Header().Get("Location"), rec.Header().Get(httplock.HeaderReplayed), rec.Body)
	}
	post(`{"item":"book"}`) // runs
	post(`{"item":"book"}`) // a retry: replayed
	post(`{"item":"pen"}`)  // the key reused for another request: 422
	fmt.Println("handler runs:", runs)
	// Output:
	// 201 /orders/1  {"id":1,"run":1}
	// 201 /orders/1 true {"id":1,"run":1}
	// 422   {"type":"urn:syncguard:problem:idempotency-key-reused","title":"Idempotency key reused","status":422,"detail":"A response is stored for this key, for a different request (method, route, URI or body). Use a new key for a new request."}
	//
	// handler runs: 1
}

// Keys include the route by default; WithRouteScope(false) shares one key
// space across the routes under the prefix.
func ExampleWithRouteScope() {
	var backend lock.Backend // your backend
	var deposit, withdraw http.Handler

	mw, err := httplock.New(backend,
		httplock.WithKeyFunc(httplock.FromPathValue("account")),
		httplock.WithPrefix("account:"),
		httplock.WithRouteScope(false)) // deposits and withdrawals on one account exclude each other
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /accounts/{account}/deposit", mw(deposit))
	mux.Handle("POST /accounts/{account}/withdraw", mw(withdraw))
}

// At most two exports per user at once, across every instance: a third
// concurrent export of the same user is answered 429 Too Many Requests,
// while another user has slots of their own.
func ExampleWithLimit() {
	mr, err := miniredis.Run() // an embedded Redis; use a real one in production
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	backend, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}
	mw, err := httplock.New(backend,
		httplock.WithKeyFunc(httplock.FromHeader("X-User")),
		httplock.WithTTL(10*time.Second),
		httplock.WithLimit(2))
	if err != nil {
		panic(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("POST /exports", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-User") == "alice" {
			inside <- struct{}{}
			<-release // a long export
		}
		fmt.Fprint(w, "exported")
	})))
	export := func(user string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/exports", nil)
		req.Header.Set("X-User", user)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}

	done := make(chan int)
	for range 2 { // alice's two exports take both her slots
		go func() { done <- export("alice").Code }()
	}
	<-inside
	<-inside
	rec := export("alice") // a third one
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), "Retry-After:", rec.Header().Get("Retry-After"))
	fmt.Println(rec.Body)
	rec = export("bob")
	fmt.Println("bob:", rec.Code, rec.Body)
	close(release)
	fmt.Println("alice:", <-done, <-done)
	// Output:
	// 429 application/problem+json Retry-After: 10
	// {"type":"urn:syncguard:problem:concurrency-limit-reached","title":"Too many concurrent requests","status":429,"detail":"The limit of concurrent requests for this resource is reached. Retry after 10s."}
	//
	// bob: 200 exported
	// alice: 200 200
}
