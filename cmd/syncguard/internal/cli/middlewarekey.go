package cli

import (
	"flag"
	"strings"

	"github.com/syncguard-go/syncguard/internal/httpkey"
)

// The keys of the middleware (httplock, echolock, ginlock, grpclock). They
// lock
//
//	<key prefix><route>:<scope>:<key>
//
// where the key prefix is WithPrefix's namespace (verbatim), the route is
// the method, a space and the route pattern ("POST /orders/{id}"; for
// grpclock the call's full method name, "/orders.v1.Orders/Create"; empty
// with WithRouteScope(false) and for limits), the scope is the principal
// of WithScope (empty without it), and the key is the key function's
// result, each part byte for byte (internal/httpkey has the rules, which
// the middleware uses too; TestShowRouteKey checks the two agree). show
// and release build that name from --key-prefix, --route and --scope, so
// the operator gives what the request carried. --route takes the route as
// written ("POST /accounts/:id/withdraw") or as ls prints it inside a key,
// escaped ("POST /accounts/\:id/withdraw").

// keyOf is the key that show and release look at: KEY as given, or the
// middleware's key of KEY with --route, --scope or --key-prefix.
func keyOf(o *options, key string) string {
	if o.route == "" && o.scope == "" && o.keyPrefix == "" {
		return key
	}
	name, _ := httpkey.Build(o.keyPrefix, routeAsWritten(o.route), o.scope, key)
	return name
}

// routeAsWritten returns route unescaped when it is in the escaped form a
// key shows (a '\' before each ':' and '\'), else as given.
func routeAsWritten(route string) string {
	if !strings.Contains(route, `\:`) {
		return route
	}
	if r, ok := httpkey.Unescape(route); ok {
		return r
	}
	return route
}

// keyFlags are the flags of show and release that build a middleware's key.
func (o *options) keyFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.route, "route", "", `the HTTP middleware's route of KEY: the method and route pattern, "POST /orders/{id}"`)
	fs.StringVar(&o.scope, "scope", "", "the HTTP middleware's scope of KEY (WithScope's principal)")
	fs.StringVar(&o.keyPrefix, "key-prefix", "", "the HTTP middleware's WithPrefix namespace of KEY")
}
