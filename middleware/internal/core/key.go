package core

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/internal/httpkey"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Key turns the key extractor's result into the lock key (internal/httpkey):
// the prefix, the route (empty when the route is left out) and ':', the principal
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
