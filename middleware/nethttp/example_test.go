package httplock_test

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
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
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
		httplock.FromHeader("Idempotency-Key"),
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
	// The lock key is the prefix, the route, an empty scope and the Idempotency-Key.
	// Retry-After is 1: the holder's lease has 30s left (a live holder's
	// heartbeat keeps it above half the TTL), but this route's handlers
	// hold the lock for well under a second.
	l, err := backend.Acquire(context.Background(), "orders:POST /orders::3f6c", 30*time.Second)
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
// the same key with another body is refused. Keys belong to the
// authenticated user (WithScope): another user sending the same key gets
// a run of their own, never the first user's response.
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
		httplock.FromIdempotencyKey(), // the draft standard's header syntax
		httplock.WithScope(userID),    // the user your authentication middleware established
		httplock.WithReplay(guard.DefaultReplayTTL))
	if err != nil {
		panic(err)
	}
	runs := 0
	mux := http.NewServeMux()
	mux.Handle("POST /orders", authenticate(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", fmt.Sprintf("/orders/%d", runs))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":%d}`, runs)
	}))))
	post := func(user, body string) {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+user)
		req.Header.Set("Idempotency-Key", "3f6c")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Println(user, rec.Code, rec.Header().Get("Location"), rec.Header().Get(guard.HeaderReplayed), rec.Body)
	}
	post("alice", `{"item":"book"}`) // runs
	post("alice", `{"item":"book"}`) // a retry: replayed
	post("bob", `{"item":"book"}`)   // another user's key: a run of its own
	post("alice", `{"item":"pen"}`)  // the key reused for another request: 422
	fmt.Println("handler runs:", runs)
	// Output:
	// alice 201 /orders/1  {"id":1}
	// alice 201 /orders/1 true {"id":1}
	// bob 201 /orders/2  {"id":2}
	// alice 422   {"type":"urn:syncguard:problem:idempotency-key-reused","title":"Idempotency key reused","status":422,"detail":"A response is stored for this key, for a different request (method, route, URI or body). Use a new key for a new request."}
	//
	// handler runs: 2
}

// userKey is the context key under which authenticate puts the user.
type userKey struct{}

// authenticate stands in for your authentication middleware: it accepts
// "Authorization: Bearer <user>" (a real one verifies a token) and puts
// the user in the request's context; anything else is answered 401.
func authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}

// README: nethttp-userid
// userID is the scope (or the key) of a request: the user that
// authenticate established, never a header the client chooses.
func userID(r *http.Request) (string, error) {
	user, ok := r.Context().Value(userKey{}).(string)
	if !ok {
		return "", errors.New("not authenticated") // answered 401
	}
	return user, nil
}

// END README

// Keys include the route by default; WithRouteScope(false) shares one key
// space across the routes under the prefix.
func ExampleWithRouteScope() {
	var backend lock.Backend // your backend
	var deposit, withdraw http.Handler

	mw, err := httplock.New(backend,
		httplock.FromPathValue("account"),
		httplock.WithPrefix("account:"),
		httplock.WithRouteScope(false)) // deposits and withdrawals on one account exclude each other
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /accounts/{account}/deposit", mw(deposit))
	mux.Handle("POST /accounts/{account}/withdraw", mw(withdraw))
}

// At most two exports per user at once, across every instance and every
// route that shares the middleware: a third concurrent export of the same
// user is answered 429 Too Many Requests, while another user has slots of
// their own. The key is the authenticated user; a limit leaves the route
// out of its key, so both export routes count against one limit.
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
	mw, err := httplock.New(backend, userID, // the authenticated user
		httplock.WithPrefix("exports:"),
		httplock.WithTTL(10*time.Second),
		httplock.WithLimit(2))
	if err != nil {
		panic(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	export := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, _ := userID(r); user == "alice" {
			inside <- struct{}{}
			<-release // a long export
		}
		fmt.Fprint(w, "exported")
	})
	mux := http.NewServeMux()
	mux.Handle("POST /exports", authenticate(mw(export)))
	mux.Handle("POST /reports/{id}/export", authenticate(mw(export)))
	post := func(user, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.Header.Set("Authorization", "Bearer "+user)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}

	done := make(chan int)
	go func() { done <- post("alice", "/exports").Code }()
	go func() { done <- post("alice", "/reports/7/export").Code }()
	<-inside
	<-inside
	rec := post("alice", "/reports/8/export") // a third one, on either route; Retry-After 1: no export has finished here yet
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), "Retry-After:", rec.Header().Get("Retry-After"))
	fmt.Println(rec.Body)
	rec = post("bob", "/exports")
	fmt.Println("bob:", rec.Code, rec.Body)
	close(release)
	fmt.Println("alice:", <-done, <-done)
	// Output:
	// 429 application/problem+json Retry-After: 1
	// {"type":"urn:syncguard:problem:concurrency-limit-reached","title":"Too many concurrent requests","status":429,"detail":"The limit of concurrent requests for this resource is reached. Retry after 1s."}
	//
	// bob: 200 exported
	// alice: 200 200
}
