package gocronlock_test

import (
	"context"
	"testing"
	"time"

	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// TestElector: of two Electors one leads, LeaderOf names it, and its
// IsLeader costs Redis nothing; Stop hands the term to the other at once.
func TestElector(t *testing.T) {
	t.Parallel()
	in := instances(t, 3)
	ctx := context.Background()
	a, err := gocronlock.NewElector(in[0].backend, "sched", "a", election.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b, err := gocronlock.NewElector(in[1].backend, "sched", "b", election.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop() })
	if err := a.Start(ctx); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("second Start: got %v, want InvalidArgument", err)
	}
	waitLeader(t, a)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	observer := in[2].backend
	if l, err := election.LeaderOf(ctx, observer, "sched"); err != nil || l.Identity != "a" {
		t.Fatalf("LeaderOf: got %+v, %v, want a", l, err)
	}
	aTerm, _ := a.Lease()
	before := in[0].cmds.Commands.Load()
	for range 1000 {
		if err := a.IsLeader(ctx); err != nil {
			t.Fatalf("leader's IsLeader: %v", err)
		}
	}
	if n := in[0].cmds.Commands.Load() - before; n > 2 { // a heartbeat may fall in the loop
		t.Errorf("1000 IsLeader calls sent %d commands", n)
	}
	if err := b.IsLeader(ctx); err != gocronlock.ErrNotLeader {
		t.Errorf("candidate's IsLeader: got %v, want ErrNotLeader", err)
	}
	if err := a.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := a.IsLeader(ctx); err != gocronlock.ErrNotLeader {
		t.Errorf("stopped leader's IsLeader: got %v, want ErrNotLeader", err)
	}
	waitLeader(t, b) // well before the stopped term's 5s TTL
	bTerm, _ := b.Lease()
	if bTerm.Fence.Compare(aTerm.Fence) <= 0 {
		t.Errorf("next term's fence %s, want greater than %s", bTerm.Fence, aTerm.Fence)
	}
}

// waitLeader waits up to 2s for e to lead.
func waitLeader(t *testing.T, e *gocronlock.Elector) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for e.IsLeader(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("not leading after 2s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
