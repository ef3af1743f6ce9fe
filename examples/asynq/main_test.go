package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demoredis"
)

func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	if err := run(ctx, &out, ""); err != nil { // embedded miniredis
		t.Fatalf("run: %v\noutput:\n%s", err, &out)
	}
	got := out.String()
	for _, want := range []string{
		"sending invoice 42 (fence 000000000000001)",
		"sending invoice 43 (fence 000000000000001)",
		"Done: 2 ran, 6 dropped (already sent)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "sending invoice"); n != 2 {
		t.Errorf("invoices sent: got %d, want 2; output:\n%s", n, got)
	}
}

func TestConnectBadURL(t *testing.T) {
	if _, _, err := demoredis.Connect(context.Background(), &bytes.Buffer{}, "not a url"); err == nil {
		t.Error("connect with a malformed REDIS_URL: got nil error")
	}
}
