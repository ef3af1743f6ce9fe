package cli

import (
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"strings"
)

// The keys of the HTTP middleware (httplock, echolock). They lock
//
//	<key prefix><route>:<scope>:<key>
//
// where the key prefix is WithPrefix's namespace (verbatim), the route is
// the method, a space and the route pattern ("POST /orders/{id}", left out
// with WithRouteScope(false) and for limits), the scope is the principal
// of WithScope (left out without it), and the key is the key function's
// result; the route and the scope are escaped ('\' and ':' get a '\' in
// front) and a route longer than 96 bytes escaped is "#" and a hash of it.
// show and release build that name from --key-prefix, --route and --scope,
// so the operator gives what the request carried. (The rules are
// middleware/internal/guard's Key and scope, which cmd must not import;
// TestShowRouteKey checks the two agree through httplock.)

// maxScopeBytes is the longest route part kept as it is (guard's).
const maxScopeBytes = 96

// middlewareKey returns the lock key the HTTP middleware builds from its
// parts: keyPrefix, the route (none when ""), the scope (none when "") and
// key.
func middlewareKey(keyPrefix, route, scope, key string) string {
	var b strings.Builder
	b.WriteString(keyPrefix)
	if route != "" {
		var r strings.Builder
		writeEscaped(&r, route)
		if r.Len() <= maxScopeBytes {
			b.WriteString(r.String())
		} else {
			sum := sha256.Sum256([]byte(route))
			b.WriteString("#" + base64.RawURLEncoding.EncodeToString(sum[:16]))
		}
		b.WriteByte(':')
	}
	if scope != "" {
		writeEscaped(&b, scope)
		b.WriteByte(':')
	}
	b.WriteString(key)
	return b.String()
}

// writeEscaped writes p to b with each '\' and ':' preceded by '\'.
func writeEscaped(b *strings.Builder, p string) {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '\\' || c == ':' {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
}

// keyOf is the key that show and release look at: KEY as given, or the
// middleware's key of KEY with --route, --scope or --key-prefix.
func keyOf(o *options, key string) string {
	if o.route == "" && o.scope == "" && o.keyPrefix == "" {
		return key
	}
	return middlewareKey(o.keyPrefix, o.route, o.scope, key)
}

// keyFlags are the flags of show and release that build a middleware's key.
func (o *options) keyFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.route, "route", "", `the HTTP middleware's route of KEY: the method and route pattern, "POST /orders/{id}"`)
	fs.StringVar(&o.scope, "scope", "", "the HTTP middleware's scope of KEY (WithScope's principal)")
	fs.StringVar(&o.keyPrefix, "key-prefix", "", "the HTTP middleware's WithPrefix namespace of KEY")
}
