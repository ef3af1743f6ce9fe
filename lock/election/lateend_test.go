package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// cancelOnProclaim is a Store whose first Proclaim cancels the Lead that
// won the term: ctx ends after the term is won and held, before fn.
type cancelOnProclaim struct {
	*redisbackend.Backend
	cancel context.CancelFunc
}

func (c cancelOnProclaim) Proclaim(ctx context.Context, term lock.Lease, identity string) error {
	c.cancel()
	return c.Backend.Proclaim(ctx, term, identity)
}

// TestLeadContextEndsBeforeTerm: when Lead's context ends after the term
// is won but before fn would start, fn is not called, Lead returns
// ctx's error and the term is released at once (the key is free long
// before its TTL).
func TestLeadContextEndsBeforeTerm(t *testing.T) {
	srv := redistest.Shared(t)
	rb := newBackends(t, srv, redistest.Prefix(t), 1)[0]
	const key = "leader:late-cancel"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := cancelOnProclaim{Backend: rb, cancel: cancel}
	called := false
	done := make(chan error, 1)
	go func() {
		done <- election.Lead(ctx, b, key, "a", func(ctx context.Context, term lock.Lease) error {
			called = true
			return nil
		}, election.WithTTL(time.Minute))
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Lead did not return within 20s of its context's end")
	}
	if called {
		t.Error("fn ran for a candidate whose context had ended")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Lead = %v, want context.Canceled", err)
	}
	lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer lcancel()
	if info, err := rb.LookupKey(lctx, key); err != nil || info != nil {
		t.Errorf("LookupKey after Lead returned = %+v, %v; want free (released, TTL 1m)", info, err)
	}
}
