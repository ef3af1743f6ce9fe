// Package httpkey builds the lock keys of the HTTP middleware (httplock,
// echolock) from their parts. The middleware and the syncguard command both
// use it, so that the command names the keys the middleware locks.
//
// A key is
//
//	<prefix><route>:<scope>:<key>
//
// where the prefix is the middleware's namespace (verbatim), the route is
// the method, a space and the route pattern, the scope is the principal,
// and the key is the key function's result. The route and the scope are
// escaped as Compose parts ('\' and ':' get a '\' in front), so the ':'
// after each ends it: no two (route, scope, key) triples give one name. A
// route longer than MaxRouteBytes escaped is "#" and a hash of it. The
// route and the scope are left out when empty.
package httpkey

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// MaxRouteBytes bounds the route part of a key: a longer route (an escaped
// request path, when no pattern matched) is replaced by a hash, so that it
// does not use up the key's 512 bytes.
const MaxRouteBytes = 96

// WriteEscaped writes p to b with each '\' and ':' preceded by '\'. The
// result has no unescaped ':'.
func WriteEscaped(b *strings.Builder, p string) {
	if !strings.ContainsAny(p, `\:`) {
		b.WriteString(p)
		return
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '\\' || c == ':' {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
}

// Route returns route as it goes into a key: escaped, or a hash when long.
func Route(route string) string {
	var b strings.Builder
	WriteEscaped(&b, route)
	if b.Len() <= MaxRouteBytes {
		return b.String()
	}
	sum := sha256.Sum256([]byte(route))
	return "#" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Build returns the key of the parts (route and scope left out when
// empty), and how many of its bytes come before key.
func Build(prefix, route, scope, key string) (name string, used int) {
	var b strings.Builder
	b.WriteString(prefix)
	if route != "" {
		b.WriteString(Route(route))
		b.WriteByte(':')
	}
	if scope != "" {
		WriteEscaped(&b, scope)
		b.WriteByte(':')
	}
	used = b.Len()
	b.WriteString(key)
	return b.String(), used
}
