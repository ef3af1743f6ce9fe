package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
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
			opts := []httplock.Option{httplock.WithTTL(time.Minute)}
			if tc.scope != "" {
				opts = append(opts, httplock.WithScope(func(*http.Request) (string, error) { return tc.scope, nil }))
			}
			if tc.keyPrefix != "" {
				opts = append(opts, httplock.WithPrefix(tc.keyPrefix))
			}
			mw, err := httplock.New(b, httplock.FromHeader("Idempotency-Key"), opts...)
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

// TestEchoRouteAsWritten: an Echo route's key has its ':' escaped
// (`POST /accounts/\:id/withdraw:alice:42`); show and release take the
// route as written or as the key prints it, and print it as written.
func TestEchoRouteAsWritten(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	held, release := make(chan lock.Lease, 1), make(chan struct{})
	e := echo.New()
	e.POST("/accounts/:id/withdraw", func(c echo.Context) error {
		l, _ := echolock.LeaseFrom(c)
		held <- l
		<-release
		return c.NoContent(http.StatusOK)
	}, echolock.NewWithConfig(echolock.Config{Backend: b, KeyExtractor: echolock.FromParam("id"),
		Scope: func(echo.Context) (string, error) { return "alice", nil }}))
	served := make(chan struct{})
	go func() {
		defer close(served)
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/accounts/42/withdraw", nil))
	}()
	var l lock.Lease
	select {
	case l = <-held:
	case <-served:
		t.Fatal("the request was answered without running the handler")
	}
	defer func() { close(release); <-served }()
	const written, escaped = "POST /accounts/:id/withdraw", `POST /accounts/\:id/withdraw`
	if want := escaped + ":alice:42"; l.Key != want {
		t.Fatalf("echolock locked %q, want %q", l.Key, want)
	}

	for _, route := range []string{written, escaped} {
		args := []string{"--redis", urlOf(srv), "--prefix", p, "--route", route, "--scope", "alice", "42"}
		out := syncguard(t, append([]string{"show"}, args...)...).out
		for _, want := range []string{"key            " + l.Key + "\n", "  route        " + written + "\n",
			"  scope        alice\n", "  request key  42\n", "state          locked\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("show --route %q lacks %q:\n%s", route, want, out)
			}
		}
		var st state
		if err := json.Unmarshal([]byte(syncguard(t, append([]string{"show", "--json"}, args...)...).out), &st); err != nil ||
			st.Request == nil || *st.Request != (request{Route: written, Scope: "alice", Key: "42"}) {
			t.Errorf("show --json --route %q: request %+v (%v), want the route as written", route, st.Request, err)
		}
	}
	r := syncguard(t, "release", "--force", "--yes", "--redis", urlOf(srv), "--prefix", p, "--route", escaped, "--scope", "alice", "42")
	if want := "  named by route " + written + ", scope alice, key 42\n"; r.code != 0 || !strings.Contains(r.out, want) {
		t.Errorf("release --route: status %d, stderr %q, output lacks %q:\n%s", r.code, r.err, want, r.out)
	}
	if locked, err := b.IsLocked(context.Background(), l.Key); err != nil || locked {
		t.Errorf("after release --route: locked %v, %v", locked, err)
	}
}
