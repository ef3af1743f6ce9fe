package main

import (
	"context"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{"$ syncguard ls --redis redis://", "000000000000003  ", " invoice:42\n", " order:7\n", "2/3 slots", " exports:user-7\n", "2 locks, 1 limit (2 slots) (scanned"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
