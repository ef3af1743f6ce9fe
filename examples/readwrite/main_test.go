package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/examples/internal/demotest"
)

func TestDemo(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	if err := demorun.Run(ctx, &out, "", demo); err != nil { // embedded miniredis
		t.Fatalf("demo: %v\noutput:\n%s", err, &out)
	}
	for _, want := range []string{
		"reader-1 holds settings:tenant-7 with fence 000000000000001",
		"reader-2 holds settings:tenant-7 with fence 000000000000002",
		"reader-3 refused: a writer waits",
		"writer holds settings:tenant-7 alone with fence 000000000000003",
		"reader-A wakes up, caches its value with fence 000000000000004 -> REFUSED",
		`OK: settings:tenant-7 = "v3" (fence 000000000000005)`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; got:\n%s", want, &out)
		}
	}
}
