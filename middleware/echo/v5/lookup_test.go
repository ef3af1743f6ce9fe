package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo/v5"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestKeys checks the keys that KeyLookup strings and the extractors
// read from one request, and that a missing part is a 400 without a
// backend call.
func TestKeys(t *testing.T) {
	tests := []struct {
		desc   string
		lookup string
		key    echolock.KeyExtractor
		want   string // the lock key; "" means none taken
	}{
		{desc: "header", lookup: "header:Idempotency-Key", want: "ik:1"},
		{desc: "param", lookup: "param:id", want: "42"},
		{desc: "query", lookup: "query:order", want: "o-7"},
		{desc: "form", lookup: "form:ref", want: "f1"},
		{desc: "cookie", lookup: "cookie:session", want: "s9"},
		{desc: "idempotency, quoted", lookup: "idempotency:X-Request-Key", want: `rk"1`},
		{desc: "parts escaped", lookup: "param:tenant,header:Idempotency-Key", want: `acme:ik\:1`},
		{desc: "missing part", lookup: "param:id,query:nope"},
		{desc: "FromParam", key: echolock.FromParam("id"), want: "42"},
		{desc: "FromForm", key: echolock.FromForm("ref"), want: "f1"},
		{desc: "FromCookie", key: echolock.FromCookie("session"), want: "s9"},
		{desc: "FromIdempotencyKey", key: echolock.FromIdempotencyKey(), want: "ik:1"},
		{desc: "Compose", key: echolock.Compose(echolock.FromParam("tenant"), echolock.FromQuery("order")), want: "acme:o-7"},
		{desc: "missing query", key: echolock.FromQuery("nope")},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			b := &guardtest.KeyRecorder{}
			mw, err := echolock.Config{Backend: b, KeyLookup: tt.lookup, KeyExtractor: tt.key, RouteScope: echolock.RouteScopeOff}.ToMiddleware()
			if err != nil {
				t.Fatalf("ToMiddleware: %v", err)
			}
			var seen error
			e := newEcho("/:tenant/orders/:id", mw, func(*echo.Context) error { return nil })
			e.HTTPErrorHandler = func(_ *echo.Context, err error) { seen = err }
			req := httptest.NewRequest(http.MethodPost, "/acme/orders/42?order=o-7", strings.NewReader(url.Values{"ref": {"f1"}}.Encode()))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			req.Header.Set("Idempotency-Key", "ik:1")
			req.Header.Set("X-Request-Key", `"rk\"1"`)
			req.AddCookie(&http.Cookie{Name: "session", Value: "s9"})
			e.ServeHTTP(httptest.NewRecorder(), req)
			if tt.want == "" {
				if len(b.Keys) != 0 || lock.CodeOf(seen) != lock.CodeInvalidArgument {
					t.Errorf("keys %q, error %v; want none and InvalidArgument (400)", b.Keys, seen)
				}
				return
			}
			if len(b.Keys) != 1 || b.Keys[0] != "::"+tt.want {
				t.Errorf("keys %q, want [%q]", b.Keys, "::"+tt.want)
			}
		})
	}
}

// TestConfigErrors: a bad configuration is an InvalidArgument error
// naming the Config field, and NewWithConfig panics with it.
func TestConfigErrors(t *testing.T) {
	b := &guardtest.KeyRecorder{}
	tests := []struct {
		desc string
		c    echolock.Config
		want string
	}{
		{"no key", echolock.Config{Backend: b}, "Config.KeyLookup or Config.KeyExtractor"},
		{"both keys", echolock.Config{Backend: b, KeyLookup: "param:id", KeyExtractor: echolock.FromParam("id")}, "both"},
		{"bad lookup", echolock.Config{Backend: b, KeyLookup: "body:id"}, `unknown source "body"`},
		{"header value prefix", echolock.Config{Backend: b, KeyLookup: "header:Authorization:Bearer "}, "value prefix"},
		{"TTL", echolock.Config{Backend: b, KeyLookup: "param:id", TTL: time.Microsecond}, "Config.TTL"},
		{"route scope", echolock.Config{Backend: b, KeyLookup: "param:id", RouteScope: 7}, "Config.RouteScope"},
		{"problem base", echolock.Config{Backend: b, KeyLookup: "param:id", ProblemTypeBase: "problems/"}, "Config.ProblemTypeBase"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			mw, err := tt.c.ToMiddleware()
			if mw != nil || lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ToMiddleware = %v, %v; want nil and an InvalidArgument error containing %q", mw != nil, err, tt.want)
			}
			defer func() {
				if p, _ := recover().(error); p == nil || p.Error() != err.Error() {
					t.Errorf("NewWithConfig panicked with %v, want %v", p, err)
				}
			}()
			echolock.NewWithConfig(tt.c)
		})
	}
}
