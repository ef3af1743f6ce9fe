package demorun

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	err := Run(ctx, &out, "", func(ctx context.Context, env *Env) error {
		if env.Mini == nil {
			t.Error("Env.Mini: got nil, want the embedded server")
		}
		b, err := env.Backend("demo-test")
		if err != nil {
			return err
		}
		l, err := b.Acquire(ctx, "k", time.Second)
		if err != nil {
			return err
		}
		env.Expire(ctx, time.Second)
		if err := b.Release(ctx, l.ID); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release after Expire: got %v, want lock.ErrNotHeld", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v\noutput:\n%s", err, &out)
	}
	for _, want := range []string{"Redis: embedded miniredis at ", "\nKeys:  demo-test:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; got:\n%s", want, &out)
		}
	}
}

func TestBackendWith(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	err := Run(ctx, &out, "", func(ctx context.Context, env *Env) error {
		b, err := env.BackendWith("demo-test", redisbackend.Options{Prefix: "not-this", FenceStripes: 8})
		if err != nil {
			return err
		}
		var prev lock.Fence
		for i := range 3 {
			l, err := b.Acquire(ctx, "k", time.Second)
			if err != nil {
				return err
			}
			if i > 0 && l.Fence.Compare(prev) <= 0 {
				t.Errorf("grant %d: fence %s after %s, want it higher", i+1, l.Fence, prev)
			}
			prev = l.Fence
			if err := b.Release(ctx, l.ID); err != nil {
				return err
			}
		}
		keys := env.Mini.Keys()
		if len(keys) == 0 {
			t.Error("no keys on the server: the fence counter should stay")
		}
		for _, k := range keys {
			if !strings.HasPrefix(k, "demo-test:") {
				t.Errorf("key %q is not under the run's prefix", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v\noutput:\n%s", err, &out)
	}
	for _, want := range []string{"\nKeys:  demo-test:", "\nFences: 8 striped counters"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; got:\n%s", want, &out)
		}
	}
}

func TestRunBadURL(t *testing.T) {
	err := Run(context.Background(), &bytes.Buffer{}, "not a url", func(context.Context, *Env) error {
		t.Error("the demo ran without a server")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Errorf("Run with a malformed REDIS_URL: got %v, want an error naming REDIS_URL", err)
	}
}

func TestRunBroken(t *testing.T) {
	wrapped := false
	err := RunBroken(context.Background(), &bytes.Buffer{}, func(b lock.Backend) lock.Backend {
		wrapped = true
		return b
	}, func(ctx context.Context, env *Env) error {
		_, err := env.Backend("demo-test")
		return err
	})
	if err != nil || !wrapped {
		t.Errorf("RunBroken: got error %v and wrapped %v, want nil and true", err, wrapped)
	}
}
