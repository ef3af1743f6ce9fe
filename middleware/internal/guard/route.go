package guard

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// maxScopeBytes bounds the route part of a scoped key: a longer route (an
// escaped request path, when no pattern matched) is replaced by a hash, so
// the route does not use up the 512-byte key budget.
const maxScopeBytes = 96

// Route names the route of a request for key scoping, the replay
// fingerprint and the Retry-After estimate: the method, a space and the
// route pattern, such as "POST /orders/{id}". A method at the start of
// pattern (Go's ServeMux keeps "POST /orders/{id}" in Request.Pattern) is
// replaced by method, so a pattern registered for GET and served to HEAD
// gives "HEAD ...". An empty pattern (no router, or middleware in front
// of the router) falls back to path, the escaped request path.
func Route(method, pattern, path string) string {
	p := pattern
	if p == "" {
		p = path
	}
	if i := strings.IndexAny(p, " \t"); i >= 0 && !strings.Contains(p[:i], "/") {
		p = strings.TrimLeft(p[i:], " \t")
	}
	return method + " " + p
}

// scope is the route as it goes into a scoped key: escaped as a Compose
// part (so the ':' after it ends it), or a hash when long.
func scope(route string) string {
	var b strings.Builder
	writeEscaped(&b, route)
	if b.Len() <= maxScopeBytes {
		return b.String()
	}
	sum := sha256.Sum256([]byte(route))
	return "#" + base64.RawURLEncoding.EncodeToString(sum[:16])
}
