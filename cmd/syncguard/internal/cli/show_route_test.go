package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
	"github.com/syncguard-go/syncguard/lock"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestShowRouteKey: show and release build the name the HTTP middleware
// locks from the key the request carried, its route, scope and key
// prefix. A request holds its key (the handler waits) while show and
// release --force look it up by those parts; a route longer than the
// middleware keeps is hashed as it hashes it.
func TestShowRouteKey(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	long := "/exports/" + strings.Repeat("very-long-segment/", 6) + "{id}" // over 96 bytes with the method
	for _, tc := range []struct {
		desc, pattern, route, scope, keyPrefix string
	}{
		{desc: "route", pattern: "POST /orders/{id}", route: "POST /orders/{id}"},
		{desc: "route, scope and key prefix, escaped", pattern: "POST /orders/{id}", route: "POST /orders/{id}", scope: `acme:eu\1`, keyPrefix: "api:"},
		{desc: "long route, hashed", pattern: "PUT " + long, route: "PUT " + long, scope: "u1"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			opts := []httplock.Option{httplock.WithKeyFunc(httplock.FromHeader("Idempotency-Key")), httplock.WithTTL(time.Minute)}
			if tc.scope != "" {
				opts = append(opts, httplock.WithScope(func(*http.Request) (string, error) { return tc.scope, nil }))
			}
			if tc.keyPrefix != "" {
				opts = append(opts, httplock.WithPrefix(tc.keyPrefix))
			}
			mw, err := httplock.New(b, opts...)
			if err != nil {
				t.Fatal(err)
			}
			held, release := make(chan lock.Lease, 1), make(chan struct{})
			mux := http.NewServeMux()
			mux.Handle(tc.pattern, mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				l, _ := lock.LeaseFrom(r.Context())
				held <- l
				<-release
			})))
			path := strings.Replace(strings.TrimPrefix(tc.pattern, strings.SplitN(tc.pattern, " ", 2)[0]+" "), "{id}", "7", 1)
			req := httptest.NewRequest(strings.SplitN(tc.pattern, " ", 2)[0], path, nil)
			req.Header.Set("Idempotency-Key", "k-1")
			served := make(chan int, 1)
			go func() {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, req)
				served <- rec.Code
			}()
			var l lock.Lease
			select {
			case l = <-held:
			case code := <-served:
				t.Fatalf("the request was answered %d without running the handler", code)
			}
			defer func() { close(release); <-served }()

			args := []string{"--redis", urlOf(srv), "--prefix", p, "--route", tc.route, "k-1"}
			if tc.scope != "" {
				args = append(args, "--scope", tc.scope)
			}
			if tc.keyPrefix != "" {
				args = append(args, "--key-prefix", tc.keyPrefix)
			}
			r := syncguard(t, append([]string{"show", "--json"}, args...)...)
			var st state
			if r.code != 0 || json.Unmarshal([]byte(r.out), &st) != nil {
				t.Fatalf("show: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
			}
			if st.Key != l.Key || !st.Locked || st.Lock.Fence != l.Fence {
				t.Errorf("show built key %q (locked %v), want %q, held with fence %s", st.Key, st.Locked, l.Key, l.Fence)
			}
			r = syncguard(t, append([]string{"release", "--force", "--yes"}, args...)...)
			if locked, _ := b.IsLocked(context.Background(), l.Key); r.code != 0 || locked {
				t.Errorf("release --force by route: status %d, stderr %q, still locked %v", r.code, r.err, locked)
			}
		})
	}
}
