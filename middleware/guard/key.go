package guard

import (
	"net/http"
	"strings"

	"github.com/syncguard-go/syncguard/internal/httpkey"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// KeyFunc reads the lock key from a request. An error, or "", is
// answered 400 without calling the backend. Adapters turn it into their
// framework's key function.
type KeyFunc func(*http.Request) (string, error)

// FromHeader reads the first value of the header name, as written. For
// Idempotency-Key use FromIdempotencyKey.
func FromHeader(name string) KeyFunc {
	return func(r *http.Request) (string, error) { return present("header", name, r.Header.Get(name)) }
}

// FromIdempotencyKey reads the Idempotency-Key header as the IETF draft
// defines it (see IdempotencyKey), so that "k1" and k1 are one key.
func FromIdempotencyKey() KeyFunc { return FromIdempotencyHeader(HeaderIdempotencyKey) }

// FromIdempotencyHeader reads the header name as FromIdempotencyKey reads
// Idempotency-Key.
func FromIdempotencyHeader(name string) KeyFunc {
	return func(r *http.Request) (string, error) { return IdempotencyKey(r.Header, name) }
}

// FromQuery reads the first value of the URL query parameter name.
func FromQuery(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		return present("query parameter", name, r.URL.Query().Get(name))
	}
}

// FromCookie reads the value of the request cookie name.
func FromCookie(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		ck, err := r.Cookie(name)
		if err != nil {
			return "", Missing("cookie", name)
		}
		return present("cookie", name, ck.Value)
	}
}

// present returns v, or Missing(kind, name) when v is empty.
func present(kind, name, v string) (string, error) {
	if v == "" {
		return "", Missing(kind, name)
	}
	return v, nil
}

// Missing is the error of a key function whose request lacks the named
// part, such as ("header", "Idempotency-Key").
func Missing(kind, name string) error {
	return lockdriver.InvalidArgument("key", kind+" "+name+" is missing or empty")
}

// Compose joins the results of fns into one key: each part is escaped
// ('\' to `\\`, ':' to `\:`) and the parts joined with ':', so distinct
// tuples of parts never give one key ("acme", "42" give "acme:42"). An
// error or an empty part is an error. R is the framework's request.
func Compose[R any](fns ...func(R) (string, error)) func(R) (string, error) {
	fns = append([]func(R) (string, error)(nil), fns...)
	return func(r R) (string, error) {
		if len(fns) == 0 {
			return "", lockdriver.InvalidArgument("key", "no key parts to compose")
		}
		var b strings.Builder
		for i, f := range fns {
			if f == nil {
				return "", lockdriver.InvalidArgument("key", "nil key part")
			}
			p, err := f(r)
			if err != nil {
				return "", err
			}
			if p == "" {
				return "", lockdriver.InvalidArgument("key", "a key part is empty")
			}
			if i > 0 {
				b.WriteByte(':')
			}
			httpkey.WriteEscaped(&b, p)
		}
		return b.String(), nil
	}
}
