package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/examples/internal/demotest"
	"github.com/syncguard-go/syncguard/lock"
)

func TestDemo(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	var reg *Register
	err := demorun.Run(ctx, &out, "", func(ctx context.Context, env *demorun.Env) error { // embedded miniredis
		var err error
		reg, err = tour(ctx, env)
		return err
	})
	if err != nil {
		t.Fatalf("demo: %v\noutput:\n%s", err, &out)
	}
	got := out.String()
	for _, want := range []string{
		"worker-A wakes up, writes with fence 000000000000005 -> stale write REJECTED (fence A 000000000000005 < fence B 000000000000006)",
		"worker-A releases -> lock.ErrNotHeld",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	if got, want := strings.Count(got, "-> write accepted"), workers+1; got != want {
		t.Errorf("accepted-write lines: got %d, want %d", got, want)
	}
	accepted, rejected := reg.Stats()
	if accepted != workers+1 || rejected != 1 {
		t.Errorf("register stats: got %d accepted, %d rejected; want %d, 1", accepted, rejected, workers+1)
	}
	if value, fence := reg.Read(key); value != "paid by worker-B" || fence != "000000000000006" {
		t.Errorf("register %s: got %q (fence %s), want %q (fence 000000000000006)", key, value, fence, "paid by worker-B")
	}
}

func TestRegisterWrite(t *testing.T) {
	// Each case writes to a register that has accepted fence 5 for "k".
	tests := []struct {
		desc      string
		key       string
		fence     lock.Fence
		wantStale bool
	}{
		{desc: "newer fence", key: "k", fence: "000000000000006"},
		{desc: "equal fence", key: "k", fence: "000000000000005", wantStale: true},
		{desc: "older fence", key: "k", fence: "000000000000004", wantStale: true},
		{desc: "empty fence", key: "k", fence: "", wantStale: true},
		{desc: "other key, older fence", key: "other", fence: "000000000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			r := NewRegister()
			if err := r.Write("k", "000000000000005", "first"); err != nil {
				t.Fatalf("first write: %v", err)
			}
			err := r.Write(tt.key, tt.fence, "second")
			if got := errors.Is(err, ErrStaleFence); got != tt.wantStale {
				t.Fatalf("Write(%q, %q): got error %v, want stale %v", tt.key, tt.fence, err, tt.wantStale)
			}
			wantValue := "second"
			if tt.wantStale {
				wantValue = "first"
			}
			if got, _ := r.Read(tt.key); got != wantValue {
				t.Errorf("Read(%q) after write: got %q, want %q", tt.key, got, wantValue)
			}
		})
	}
}
