package httplock

import (
	"net/http"

	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// WithRouteScope sets whether lock keys include the request's route
// (default true for locks and replay, false for limits, WithLimit: a limit
// counts what its key names, whatever the route): the method and the
// pattern that matched
// (http.Request.Pattern of Go's ServeMux, such as "POST /orders/{id}"),
// after the prefix, so the key "42" on POST /orders and on POST
// /accounts/{id}/withdraw are two locks. When no pattern matched (the
// middleware wraps the ServeMux rather than a handler registered on it,
// or another router), the escaped request path stands in for the
// pattern. WithRouteScope(false) leaves the route out: every route under
// the prefix then shares one key space (the keys of earlier versions),
// and with replay a key reused on another route is answered 422.
func WithRouteScope(on bool) Option {
	return optionFunc(func(c *config) { c.routeScope = &on })
}

// route names r's route for the key scope, the fingerprint and the
// Retry-After estimate.
func route(r *http.Request) string {
	return guard.Route(r.Method, r.Pattern, r.URL.EscapedPath())
}
