package core

import "strings"

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
