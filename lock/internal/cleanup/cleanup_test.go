package cleanup

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errTransient = errors.New("transient")

func isTransient(err error) bool { return errors.Is(err, errTransient) }

// TestRetryUntilAnswered: transient errors are tried again, with growing
// waits, until f gives another answer.
func TestRetryUntilAnswered(t *testing.T) {
	for _, final := range []error{nil, errors.New("not found")} {
		calls := 0
		start := time.Now()
		Retry(context.Background(), func(context.Context) error {
			calls++
			if calls < 4 {
				return errTransient
			}
			return final
		}, isTransient)
		if calls != 4 {
			t.Errorf("final %v: %d calls, want 4", final, calls)
		}
		// Waits of 50, 100 and 200 ms.
		if took := time.Since(start); took < 350*time.Millisecond {
			t.Errorf("final %v: took %v, want the backoff (350ms) between tries", final, took)
		}
	}
}

// TestRetryEndsWithContext: a call that stays transient is tried until
// its context ends, and not after.
func TestRetryEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	calls := 0
	start := time.Now()
	Retry(ctx, func(fctx context.Context) error {
		if fctx != ctx {
			t.Error("f did not get Retry's context")
		}
		calls++
		return errTransient
	}, isTransient)
	if took := time.Since(start); took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("returned after %v, want at the context's end (300ms)", took)
	}
	if calls < 3 {
		t.Errorf("%d calls in 300ms, want at least 3 (50, 100 ms waits)", calls)
	}
}
