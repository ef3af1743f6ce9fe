package election

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// stub is a Backend that holds nothing: runTerm's events do not call it.
type stub struct{}

func (stub) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, lock.ErrLocked
}
func (stub) Release(context.Context, string) error { return nil }
func (stub) Extend(context.Context, string, time.Duration) (time.Time, error) {
	return time.Time{}, lock.ErrNotHeld
}
func (stub) IsLocked(context.Context, string) (bool, error)        { return false, nil }
func (stub) LookupKey(context.Context, string) (*lock.Info, error) { return nil, nil }
func (stub) LookupID(context.Context, string) (*lock.Info, error)  { return nil, nil }
func (stub) Capabilities() lock.Capabilities                       { return lock.Capabilities{Backend: "stub"} }

// hookFunc is a lock.Hook made of a function.
type hookFunc func(next lock.OpFunc) lock.OpFunc

func (f hookFunc) Operation(next lock.OpFunc) lock.OpFunc { return f(next) }

// termLog is a Hook that writes "name>kind" before next and "name<kind"
// after to lines, and keeps what next returned.
type termLog struct {
	lines []string
	errs  []error
}

func (tl *termLog) hook(name string) lock.Hook {
	return hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			tl.lines = append(tl.lines, name+">"+op.Kind.String())
			err := next(ctx, op)
			tl.lines = append(tl.lines, name+"<"+op.Kind.String())
			tl.errs = append(tl.errs, err)
			return err
		}
	})
}

var termLease = lock.Lease{Key: "k", ID: "stubstubstubstubstubst", Fence: "000000000000042", TTL: time.Minute}

// TestTermWithoutHooks: on a backend without hooks a term just runs, and
// runTerm returns the work's error.
func TestTermWithoutHooks(t *testing.T) {
	boom := errors.New("boom")
	ran := 0
	err := runTerm(context.Background(), stub{}, termLease, "node-1", func(context.Context) error { ran++; return boom })
	if ran != 1 || !errors.Is(err, boom) {
		t.Errorf("runTerm ran the work %d times and returned %v, want once and its error", ran, err)
	}
}

// TestTermReturnsTheWorksError: runTerm returns what the work returned,
// not the cause the hooks see, and a hook's error when it did not let the
// work start.
func TestTermReturnsTheWorksError(t *testing.T) {
	var log termLog
	ctx, cancel := context.WithCancelCause(context.Background())
	lost := errors.New("lost")
	err := runTerm(ctx, lock.WithHooks(stub{}, log.hook("log")), termLease, "node-1", func(context.Context) error {
		cancel(lost)
		return nil
	})
	if err != nil {
		t.Errorf("runTerm = %v, want the work's nil", err)
	}
	if len(log.errs) != 1 || !errors.Is(log.errs[0], lost) {
		t.Errorf("the hook saw %v, want one term ending with the context's cause", log.errs)
	}

	refused := errors.New("refused")
	refuse := hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			if op.Kind == lock.OpTerm {
				return refused
			}
			return next(ctx, op)
		}
	})
	ran := false
	err = runTerm(context.Background(), lock.WithHooks(stub{}, refuse), termLease, "node-1", func(context.Context) error { ran = true; return nil })
	if ran || !errors.Is(err, refused) {
		t.Errorf("runTerm ran the work: %v, returned %v; want the hook's error and no work", ran, err)
	}
}

// TestTermNestedHooks: a term goes through every layer of hooks, outer
// first, as the other events do.
func TestTermNestedHooks(t *testing.T) {
	var log termLog
	b := lock.WithHooks(lock.WithHooks(stub{}, log.hook("inner")), log.hook("outer"))
	if err := runTerm(context.Background(), b, termLease, "node-1", func(context.Context) error {
		log.lines = append(log.lines, "work")
		return nil
	}); err != nil {
		t.Fatalf("runTerm: %v", err)
	}
	if got, want := strings.Join(log.lines, " "), "outer>term inner>term work inner<term outer<term"; got != want {
		t.Errorf("trace = %q, want %q", got, want)
	}
}
