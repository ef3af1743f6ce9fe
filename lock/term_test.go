package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// fastBeat is a heartbeat that notices a stolen lease within milliseconds.
var fastBeat = election.WithHeartbeat(lock.Heartbeat{Interval: 10 * time.Millisecond})

// TestTermEndsWithItsCause: election.Lead runs each term as one OpTerm
// through the hooks, with the term's key, lease and identity, around the
// leader's function (which runs under the context the hook gave next),
// and next returns why the term ended: nil when fn resigned, fn's error,
// the loss, Lead's context ending.
func TestTermEndsWithItsCause(t *testing.T) {
	f := newFake()
	var log opLog
	b := lock.WithHooks(f, &log, markHook("term", lock.OpTerm))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	boom := errors.New("boom")
	var terms []lock.Lease
	var marks []any
	fn := func(ctx context.Context, term lock.Lease) error {
		terms = append(terms, term)
		marks = append(marks, ctx.Value(markKey{}))
		switch len(terms) {
		case 1: // resign
			return nil
		case 2: // lose the term
			waitFor(t, 5*time.Second, func() bool { return f.count("Extend") >= 1 }, "an extension")
			f.steal(term.Key)
			waitDone(t, ctx, 5*time.Second, "the term's context after its lease was stolen")
			return ctx.Err()
		case 3: // Lead's context ends
			cancel()
			<-ctx.Done()
			return nil
		}
		return boom
	}
	if err := election.Lead(ctx, b, "k", "node-1", fn, election.WithTTL(time.Minute), fastBeat); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead = %v, want context.Canceled", err)
	}
	// A fourth Lead: fn fails while it leads, and Lead returns its error.
	terms4 := len(terms)
	if err := election.Lead(context.Background(), b, "k", "node-1", fn, election.WithTTL(time.Minute)); !errors.Is(err, boom) {
		t.Fatalf("Lead = %v, want fn's error", err)
	}
	if len(terms) != terms4+1 || terms4 != 3 {
		t.Fatalf("fn ran %d terms, want 4", len(terms))
	}

	got := log.only(lock.OpTerm)
	if len(got) != len(terms) {
		t.Fatalf("the hook saw %d terms (%v), want %d", len(got), log.kinds(), len(terms))
	}
	for i, e := range got {
		l := terms[i]
		for _, d := range diffOp(e.op, lock.Op{Kind: lock.OpTerm, Key: "k", ID: l.ID, TTL: time.Minute, Lease: l, Identity: "node-1"}) {
			t.Errorf("term %d: %s", i+1, d)
		}
		if !e.closed {
			t.Errorf("term %d: next has not returned", i+1)
		}
		if marks[i] != "term" {
			t.Errorf("term %d: fn ran under a context without the hook's value", i+1)
		}
		if i > 0 && l.Fence <= terms[i-1].Fence {
			t.Errorf("term %d: fence %s, not above the previous term's %s", i+1, l.Fence, terms[i-1].Fence)
		}
	}
	checks := []struct {
		desc string
		ok   func(error) bool
	}{
		{"nil (resigned)", func(err error) bool { return err == nil }},
		{"ErrLeaseLost", func(err error) bool { return errors.Is(err, lock.ErrLeaseLost) }},
		{"context.Canceled", func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"fn's error", func(err error) bool { return errors.Is(err, boom) }},
	}
	for i, c := range checks {
		if !c.ok(got[i].err) {
			t.Errorf("term %d: next returned %v, want %s", i+1, got[i].err, c.desc)
		}
	}
}
