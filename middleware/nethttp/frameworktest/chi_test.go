package httplock_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// TestChiRoutePattern: behind chi, the route in the key is chi's route
// pattern (chi sets r.Pattern and the path values once it has routed)
// where httplock runs after the routing (With, Group). In front of a
// sub-router (Route's Use) it is the mount's pattern; in front of the
// root router, which has not routed yet, the request path, and there are
// no path values yet.
func TestChiRoutePattern(t *testing.T) {
	b := guardtest.NewBackend(t)
	byHeader, err := httplock.New(b, httplock.FromHeader("X-Key"))
	if err != nil {
		t.Fatal(err)
	}
	byID, err := httplock.New(b, httplock.FromPathValue("id"))
	if err != nil {
		t.Fatal(err)
	}
	leaseKey := func(w http.ResponseWriter, r *http.Request) {
		l, _ := lock.LeaseFrom(r.Context())
		_, _ = w.Write([]byte(l.Key))
	}
	r := chi.NewRouter()
	r.With(byHeader).Post("/orders/{id}", leaseKey)
	r.With(byID).Post("/items/{id}", leaseKey)
	r.Group(func(r chi.Router) {
		r.Use(byHeader)
		r.Post("/invoices/{id}", leaseKey)
	})
	r.Route("/api", func(r chi.Router) {
		r.Use(byHeader)
		r.Post("/orders/{id}", leaseKey)
	})
	root := chi.NewRouter()
	root.Use(byHeader)
	root.Post("/carts/{id}", leaseKey)
	tests := []struct {
		h          http.Handler
		path, want string
	}{
		{r, "/orders/42", "POST /orders/{id}::k"},
		{r, "/items/42", "POST /items/{id}::42"},
		{r, "/invoices/42", "POST /invoices/{id}::k"},
		{r, "/api/orders/42", "POST /api/*::k"},
		{root, "/carts/42", "POST /carts/42::k"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodPost, tt.path, nil)
		req.Header.Set("X-Key", "k")
		rec := httptest.NewRecorder()
		tt.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || rec.Body.String() != tt.want {
			t.Errorf("POST %s: %d, lock key %q; want %q", tt.path, rec.Code, rec.Body, tt.want)
		}
	}
}

// TestChiReplay: replay mode behind chi, keyed by Idempotency-Key.
func TestChiReplay(t *testing.T) {
	mw, err := httplock.New(guardtest.NewBackend(t),
		httplock.FromIdempotencyKey(),
		httplock.Unscoped(), httplock.WithReplay(guard.DefaultReplayTTL))
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	r := chi.NewRouter()
	r.With(mw).Post("/orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order " + chi.URLParam(r, "id")))
	})
	var bodies []string
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/orders/7", nil)
		req.Header.Set(guard.HeaderIdempotencyKey, "k")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("status %d, want 201", rec.Code)
		}
		bodies = append(bodies, rec.Body.String())
	}
	if runs != 1 || bodies[0] != "order 7" || bodies[1] != bodies[0] {
		t.Errorf("%d runs, bodies %q; want one run replayed", runs, bodies)
	}
}

// docs/http.md's chi snippet.
func readmeChi(mw func(http.Handler) http.Handler, createOrder, createInvoice http.HandlerFunc) *chi.Mux {
	// README: chi
	r := chi.NewRouter()
	r.With(mw).Post("/orders/{id}", createOrder) // runs after routing: the route is "POST /orders/{id}"
	r.Group(func(r chi.Router) {
		r.Use(mw) // a Group's middleware runs after routing too
		r.Post("/invoices/{id}", createInvoice)
	})
	// END README
	return r
}
