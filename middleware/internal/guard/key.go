package guard

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/internal/httpkey"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Key turns the key extractor's result into the lock key (internal/httpkey):
// the prefix, the route (empty with Config.NoRoute) and ':', the principal
// (the request's scope; empty when unscoped) and ':', then raw. Every part
// reaches the key byte for byte, never normalised: two (route, principal,
// key) triples never give one lock key. extractErr is the extractor's
// error. Every error has lock.CodeInvalidArgument and Op "key"; none
// contains the key or the principal.
func (g *Guard) Key(route, principal, raw string, extractErr error) (string, error) {
	if extractErr != nil {
		var le *lock.Error
		if errors.As(extractErr, &le) && le.Code == lock.CodeInvalidArgument {
			return "", extractErr
		}
		return "", &lock.Error{Code: lock.CodeInvalidArgument, Op: "key",
			Msg: "no lock key in the request", Err: extractErr}
	}
	if raw == "" {
		return "", lockdriver.InvalidArgument("key", "the lock key is empty")
	}
	if !utf8.ValidString(raw) {
		return "", lockdriver.InvalidArgument("key", "the lock key must be valid UTF-8")
	}
	if !g.route {
		route = "" // an empty route field
	}
	full, used := httpkey.Build(g.prefix, route, principal, raw)
	key, err := lockdriver.NormalizeKey(full)
	if err != nil {
		var le *lock.Error
		if errors.As(err, &le) {
			c := *le
			c.Op = "key"
			if len(full) > lockdriver.MaxKeyBytes {
				c.Msg = fmt.Sprintf("the key is %d bytes; at most %d fit here (the lock key is limited to %d bytes, and the prefix, route and scope take %d)",
					len(raw), max(lockdriver.MaxKeyBytes-used, 0), lockdriver.MaxKeyBytes, used)
			}
			return "", &c
		}
		return "", err
	}
	return key, nil
}

// Missing returns the error a key extractor gives when the request lacks
// the named part, such as ("header", "Idempotency-Key").
func Missing(kind, name string) error {
	return lockdriver.InvalidArgument("key", kind+" "+name+" is missing or empty")
}

// Compose returns an extractor that joins the results of fns into one
// key: each part is escaped ('\' becomes `\\` and ':' becomes `\:`) and
// the escaped parts are joined with ':'. A part without '\' or ':' reads
// as written, so ("acme", "42") gives "acme:42", while ("a:b", "c") gives
// `a\:b:c` and ("a", "b:c") gives `a:b\:c`: distinct tuples of parts never
// give one key. An error or an empty part from any of them is an error.
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
			writeEscaped(&b, p)
		}
		return b.String(), nil
	}
}

// writeEscaped writes p to b with each '\' and ':' preceded by '\'
// (httpkey.WriteEscaped).
func writeEscaped(b *strings.Builder, p string) { httpkey.WriteEscaped(b, p) }
