package httpkey

import (
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	long := "POST /" + strings.Repeat("a", 200)
	tests := []struct {
		desc                      string
		prefix, route, scope, key string
		want                      string
	}{
		{"all parts", "orders:", "POST /orders", "alice", "k1", "orders:POST /orders:alice:k1"},
		{"no route", "p:", "", "alice", "k1", "p:alice:k1"},
		{"no scope", "p:", "POST /", "", "k1", "p:POST /:k1"},
		{"neither", "p:", "", "", "k:1", "p:k:1"},
		{"escaped route and scope", "", `GET /a:b\c`, "t:1", "k", `GET /a\:b\\c:t\:1:k`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, used := Build(tt.prefix, tt.route, tt.scope, tt.key)
			if got != tt.want || used != len(got)-len(tt.key) {
				t.Errorf("Build = %q, %d; want %q, %d", got, used, tt.want, len(tt.want)-len(tt.key))
			}
		})
	}
	// Distinct (scope, key) pairs never give one name.
	a, _ := Build("", "", "a:b", "c")
	b, _ := Build("", "", "a", "b:c")
	if a == b {
		t.Errorf("scope a:b key c and scope a key b:c both give %q", a)
	}
	// A long route is a hash, and two long routes two hashes.
	r1, r2 := Route(long), Route(long+"b")
	if !strings.HasPrefix(r1, "#") || len(r1) > MaxRouteBytes || r1 == r2 {
		t.Errorf("Route of long routes = %q, %q; want two distinct short hashes", r1, r2)
	}
}
