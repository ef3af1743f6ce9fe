package cli

import (
	"fmt"
	"io"
	"strings"
)

// request is what show and release were given to name a key of the HTTP
// middleware (--key-prefix, --route, --scope and KEY), printed as written:
// the key the middleware locks has the route's ':' and '\' escaped, and a
// long route hashed, so it reads differently from the route in the code.
type request struct {
	KeyPrefix string `json:"keyPrefix,omitempty"`
	Route     string `json:"route,omitempty"`
	Scope     string `json:"scope,omitempty"`
	Key       string `json:"key"`
}

// requestOf returns the parts behind keyOf(o, key); nil when no flag
// names a middleware's key.
func requestOf(o *options, key string) *request {
	if o.route == "" && o.scope == "" && o.keyPrefix == "" {
		return nil
	}
	return &request{KeyPrefix: o.keyPrefix, Route: routeAsWritten(o.route), Scope: o.scope, Key: key}
}

// print writes the parts as show rows, under the key.
func (r *request) print(row func(name, format string, args ...any)) {
	if r.KeyPrefix != "" {
		row("  key prefix", "%s", display(r.KeyPrefix))
	}
	if r.Route != "" {
		row("  route", "%s", display(r.Route))
	}
	if r.Scope != "" {
		row("  scope", "%s", display(r.Scope))
	}
	row("  request key", "%s", display(r.Key))
}

// String is the parts on one line, for release's report.
func (r *request) String() string {
	var parts []string
	if r.KeyPrefix != "" {
		parts = append(parts, "key prefix "+display(r.KeyPrefix))
	}
	if r.Route != "" {
		parts = append(parts, "route "+display(r.Route))
	}
	if r.Scope != "" {
		parts = append(parts, "scope "+display(r.Scope))
	}
	return strings.Join(append(parts, "key "+display(r.Key)), ", ")
}

// printRequest writes, for release's report, the parts that named the key.
func (st *state) printRequest(w io.Writer) {
	if st.Request != nil {
		fmt.Fprintf(w, "  named by %s\n", st.Request)
	}
}
