package lock_test

import (
	"context"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

func TestLeaseFrom(t *testing.T) {
	f := newFake()
	if l, ok := lock.LeaseFrom(context.Background()); ok || l != (lock.Lease{}) {
		t.Errorf("LeaseFrom(Background) = %+v, %v; want zero, false", l, ok)
	}
	var got lock.Lease
	var ok bool
	var want lock.Lease
	err := lock.Do(context.Background(), f, "k", func(ctx context.Context, l lock.Lease) error {
		want = l
		got, ok = lock.LeaseFrom(ctx)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ok || got != want || got.Fence == "" {
		t.Errorf("LeaseFrom(fn's ctx) under Do = %+v, %v; want %+v, true", got, ok, want)
	}

	held, l, release := mustHold(t, context.Background(), f, "k")
	defer release()
	// A context derived from held, as a data layer would get it.
	ctx, cancel := context.WithCancel(held)
	defer cancel()
	if got, ok := lock.LeaseFrom(ctx); !ok || got != l {
		t.Errorf("LeaseFrom(child of held) under Hold = %+v, %v; want %+v, true", got, ok, l)
	}
}
