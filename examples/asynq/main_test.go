package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
)

func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	if err := demorun.Run(ctx, &out, "", run); err != nil { // embedded miniredis
		t.Fatalf("run: %v\noutput:\n%s", err, &out)
	}
	got := out.String()
	// Striped fence counters start near the server's time in ms.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`sending invoice 42 \(fence \d{15}\)`),
		regexp.MustCompile(`sending invoice 43 \(fence \d{15}\)`),
		regexp.MustCompile(`Done: 2 ran, 6 dropped \(already sent\)`),
	} {
		if !want.MatchString(got) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "sending invoice"); n != 2 {
		t.Errorf("invoices sent: got %d, want 2; output:\n%s", n, got)
	}
}
