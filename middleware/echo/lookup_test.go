package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestKeyLookup checks the keys that KeyLookup strings read from one
// request: a single part as is, several joined and escaped by Compose.
func TestKeyLookup(t *testing.T) {
	tests := []struct {
		desc   string
		lookup string
		want   string // the lock key; "" means 400 without a backend call
	}{
		{desc: "header", lookup: "header:Idempotency-Key", want: "ik:1"},
		{desc: "header, any case", lookup: "header:idempotency-key", want: "ik:1"},
		{desc: "param", lookup: "param:id", want: "42"},
		{desc: "query", lookup: "query:order", want: "o-7"},
		{desc: "form", lookup: "form:ref", want: "f1"},
		{desc: "cookie", lookup: "cookie:session", want: "s9"},
		{desc: "two parts", lookup: "param:tenant,param:id", want: "acme:42"},
		{desc: "a single part is not escaped", lookup: "header:Idempotency-Key", want: "ik:1"},
		{desc: "parts are escaped", lookup: "param:tenant,header:Idempotency-Key", want: `acme:ik\:1`},
		{desc: "every source", lookup: "param:tenant,param:id,query:order,form:ref,cookie:session,header:Idempotency-Key",
			want: `acme:42:o-7:f1:s9:ik\:1`},
		{desc: "spaces around parts", lookup: " param:tenant , param:id ", want: "acme:42"},
		{desc: "a part twice", lookup: "param:id,param:id", want: "42:42"},
		{desc: "idempotency, bare key", lookup: "idempotency:Idempotency-Key", want: "ik:1"},
		{desc: "idempotency, quoted key", lookup: "idempotency:X-Request-Key", want: `rk"1`},
		{desc: "idempotency, any case", lookup: "idempotency:x-request-key", want: `rk"1`},
		{desc: "header reads the quoted key as written", lookup: "header:X-Request-Key", want: `"rk\"1"`},
		{desc: "idempotency among parts", lookup: "param:tenant,idempotency:X-Request-Key", want: `acme:rk"1`},
		{desc: "missing header", lookup: "header:X-Nope"},
		{desc: "missing idempotency header", lookup: "idempotency:X-Nope"},
		{desc: "malformed idempotency header", lookup: "idempotency:X-Bad-Key"},
		{desc: "missing param", lookup: "param:nope"},
		{desc: "missing query", lookup: "query:nope"},
		{desc: "missing form value", lookup: "form:nope"},
		{desc: "missing cookie", lookup: "cookie:nope"},
		{desc: "one part of several missing", lookup: "param:id,query:nope"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			b := &guardtest.KeyRecorder{Backend: guardtest.NopBackend{}}
			var seen error
			// Unscoped: the key is what the lookup read.
			mw, err := echolock.Config{Backend: b, KeyLookup: tt.lookup, RouteScope: echolock.RouteScopeOff}.ToMiddleware()
			if err != nil {
				t.Fatalf("ToMiddleware: %v", err)
			}
			e := newEcho("/:tenant/orders/:id", mw, func(echo.Context) error { return nil })
			e.HTTPErrorHandler = func(err error, c echo.Context) { seen = err }
			req := httptest.NewRequest(http.MethodPost, "/acme/orders/42?order=o-7",
				strings.NewReader(url.Values{"ref": {"f1"}}.Encode()))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			req.Header.Set("Idempotency-Key", "ik:1")
			req.Header.Set("X-Request-Key", `"rk\"1"`)
			req.Header.Set("X-Bad-Key", `"a", "b"`)
			req.AddCookie(&http.Cookie{Name: "session", Value: "s9"})
			e.ServeHTTP(httptest.NewRecorder(), req)
			if tt.want == "" {
				if len(b.Keys) != 0 || lock.CodeOf(seen) != lock.CodeInvalidArgument {
					t.Errorf("Acquire keys %q, error %v; want none and an InvalidArgument error (400)", b.Keys, seen)
				}
				return
			}
			if len(b.Keys) != 1 || b.Keys[0] != "::"+tt.want {
				t.Errorf("Acquire keys %q, want [%q]", b.Keys, "::"+tt.want)
			}
		})
	}
}

// TestKeyLookupErrors checks that ToMiddleware rejects malformed lookups,
// with an InvalidArgument error that says what is wrong.
func TestKeyLookupErrors(t *testing.T) {
	tests := []struct {
		desc    string
		lookup  string
		wantMsg string
	}{
		{"blank", " ", "part 1 is empty"},
		{"empty part", "param:id,,header:K", "part 2 is empty"},
		{"trailing comma", "param:id,", "part 2 is empty"},
		{"no colon", "Idempotency-Key", `part "Idempotency-Key" is not <source>:<name>`},
		{"unknown source", "body:id", `unknown source "body" (want header, idempotency, param, query, form or cookie)`},
		{"source in capitals", "Header:K", `unknown source "Header"`},
		{"no name", "query:", `has no name after "query:"`},
		{"space before the name", "param: id", "leading or trailing space"},
		{"header value prefix", "header:Authorization:Bearer ", "value prefix"},
		{"bad header name", "header:Idempotency Key", "not a valid header name"},
		{"idempotency: no name", "idempotency:", `has no name after "idempotency:"`},
		{"idempotency: bad header name", "idempotency:Idempotency Key", "not a valid header name"},
		{"idempotency: a value prefix", "idempotency:Idempotency-Key:x", "not a valid header name"},
		{"idempotency in capitals", "Idempotency:Idempotency-Key", `unknown source "Idempotency"`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			mw, err := echolock.Config{Backend: guardtest.NopBackend{}, KeyLookup: tt.lookup}.ToMiddleware()
			if mw != nil || lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("ToMiddleware = %v, %v; want nil and an InvalidArgument error containing %q", mw != nil, err, tt.wantMsg)
			}
		})
	}
	t.Run("KeyLookup and KeyExtractor", func(t *testing.T) {
		c := echolock.Config{Backend: guardtest.NopBackend{}, KeyLookup: "param:id", KeyExtractor: echolock.FromParam("id")}
		if mw, err := c.ToMiddleware(); mw != nil || lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), "both") {
			t.Errorf("ToMiddleware = %v, %v; want nil and an InvalidArgument error saying both are set", mw != nil, err)
		}
	})
}

// FuzzKeyLookup checks that any KeyLookup string either builds the
// middleware or fails with InvalidArgument, without panicking.
func FuzzKeyLookup(f *testing.F) {
	for _, s := range []string{"header:Idempotency-Key", "idempotency:Idempotency-Key", "param:tenant,idempotency:K",
		"param:tenant,header:K", "query:", ",", "header:A:b", "form:x, cookie:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lookup string) {
		mw, err := echolock.Config{Backend: guardtest.NopBackend{}, KeyLookup: lookup}.ToMiddleware()
		if (mw == nil) == (err == nil) {
			t.Fatalf("ToMiddleware(%q) = %v, %v: want exactly one of them", lookup, mw != nil, err)
		}
		if err != nil && lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Fatalf("ToMiddleware(%q) error %v: want InvalidArgument", lookup, err)
		}
	})
}
