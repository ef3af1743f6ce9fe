package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/httpkey"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		method, pattern, path, want string
	}{
		{"POST", "POST /orders/{id}", "/orders/1", "POST /orders/{id}"},
		{"HEAD", "GET /orders", "/orders", "HEAD /orders"},
		{"POST", "/orders/", "/orders/x", "POST /orders/"},
		{"POST", "example.com/orders", "/orders", "POST example.com/orders"},
		{"PUT", "PUT \t /x", "/x", "PUT /x"},
		{"POST", "/accounts/:id/withdraw", "/accounts/7/withdraw", "POST /accounts/:id/withdraw"}, // Echo
		{"POST", "", "/orders/%2F1", "POST /orders/%2F1"},                                         // no pattern: the escaped path
	}
	for _, tt := range tests {
		if got := Route(tt.method, tt.pattern, tt.path); got != tt.want {
			t.Errorf("Route(%q, %q, %q) = %q, want %q", tt.method, tt.pattern, tt.path, got, tt.want)
		}
	}
}

// TestScopedKey: the route goes between the prefix and the key, escaped,
// so two routes never share a key; a long route is hashed.
func TestScopedKey(t *testing.T) {
	g := newGuard(t, Config{Prefix: "p:"})
	long := "POST /" + strings.Repeat("a", 200)
	tests := []struct {
		route, raw, want string
	}{
		{"POST /orders", "42", "p:POST /orders::42"},
		{"POST /accounts/:id/withdraw", "42", `p:POST /accounts/\:id/withdraw::42`},
		{"POST /a", "b:c", "p:POST /a::b:c"},
		{"POST /a:b", "c", `p:POST /a\:b::c`},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got, err := g.Key(tt.route, "", tt.raw, nil)
		if err != nil || got != tt.want {
			t.Errorf("Key(%q, %q) = %q, %v; want %q", tt.route, tt.raw, got, err, tt.want)
		}
		if seen[got] {
			t.Errorf("Key(%q, %q) = %q twice", tt.route, tt.raw, got)
		}
		seen[got] = true
	}
	got, err := g.Key(long, "", "42", nil)
	if err != nil || len(got) > 2+2+httpkey.MaxRouteBytes+3 || !strings.HasPrefix(got, `p:\#`) || !strings.HasSuffix(got, "::42") {
		t.Errorf("Key(long route) = %q, %v; want p:\\#<hash>::42", got, err)
	}
	if other, _ := g.Key(long+"b", "", "42", nil); other == got {
		t.Errorf("two long routes share the key %q", got)
	}
	unscoped := newGuard(t, Config{Prefix: "p:", NoRoute: true})
	if got, err := unscoped.Key("POST /orders", "", "42", nil); err != nil || got != "p:::42" {
		t.Errorf("unscoped Key = %q, %v; want p:::42", got, err)
	}
}

func TestHoldTimes(t *testing.T) {
	var h holdTimes
	if _, ok := h.estimate("POST /a"); ok {
		t.Fatal("estimate before any run")
	}
	h.observe("POST /a", 100)
	if d, ok := h.estimate("POST /a"); !ok || d != 100 {
		t.Errorf("estimate after one run = %v, %v; want 100", d, ok)
	}
	for range 50 {
		h.observe("POST /a", 1000)
	}
	if d, _ := h.estimate("POST /a"); d < 990 || d > 1000 {
		t.Errorf("estimate after 50 runs of 1000 = %v, want close to 1000", d)
	}
	for i := range maxHoldRoutes + 10 {
		h.observe("POST /"+strings.Repeat("x", i), 1)
	}
	if n := len(h.avg); n != maxHoldRoutes {
		t.Errorf("%d routes tracked, want at most %d", n, maxHoldRoutes)
	}
}

// TestKeyLengthMessage: a key too long says how many bytes fit once the
// prefix, the route and the scope have taken their part.
func TestKeyLengthMessage(t *testing.T) {
	g := newGuard(t, Config{Prefix: "orders:"})
	raw := strings.Repeat("k", 500)
	_, err := g.Key("POST /orders", "alice", raw, nil)
	used := len("orders:") + len("POST /orders") + 1 + len("alice") + 1
	want := fmt.Sprintf("the key is 500 bytes; at most %d fit here", lockdriver.MaxKeyBytes-used)
	if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), want) {
		t.Errorf("Key = %v, want an InvalidArgument error saying %q", err, want)
	}
	if strings.Contains(err.Error(), "alice") || strings.Contains(err.Error(), raw) {
		t.Errorf("the message %q holds the scope or the key", err)
	}
	if _, err := g.Key("POST /orders", "alice", raw[:lockdriver.MaxKeyBytes-used], nil); err != nil {
		t.Errorf("a key of the room left: %v", err)
	}
}

// TestKeyScopeEscaped: the principal is a Compose part, so no two (scope,
// key) pairs give one lock key.
func TestKeyScopeEscaped(t *testing.T) {
	g := newGuard(t, Config{Prefix: "p:"})
	a, _ := g.Key("POST /", "a:b", "c", nil)
	b, _ := g.Key("POST /", "a", "b:c", nil)
	if a == b || a != `p:POST /:a\:b:c` {
		t.Errorf("keys %q and %q; want them apart, the first p:POST /:a\\:b:c", a, b)
	}
}
