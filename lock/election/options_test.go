package election_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// TestLeadRefusesWhatItDoesNotUse: the wait, retry, backend and release-timeout
// options of lock are refused by Lead and Validate, before any I/O, like
// WithLimit; the options Lead uses are accepted.
func TestLeadRefusesWhatItDoesNotUse(t *testing.T) {
	fn := func(context.Context, lock.Lease) error { return nil }
	for _, tc := range []struct {
		desc string
		opt  lock.Option
		want string
	}{
		{"wait", lock.WithWait(time.Minute), "lock.WithWait"},
		{"zero wait", lock.WithWait(0), "lock.WithWait"},
		{"retry", lock.WithRetry(lock.Retry{}), "lock.WithRetry"},
		{"retry with the most retries", lock.WithRetry(lock.Retry{MaxRetries: math.MaxInt - 1, BaseDelay: time.Second}), "lock.WithRetry"},
		{"release timeout", lock.WithReleaseTimeout(time.Second), "lock.WithReleaseTimeout"},
		{"limit", lock.WithLimit(2), "lock.WithLimit"},
		{"backend timeout", lock.WithBackendTimeout(time.Second), "lock.WithBackendTimeout"},
	} {
		b := &countingBackend{}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second) // Lead would campaign
		err := election.Lead(ctx, b, "k", "me", fn, tc.opt)
		cancel()
		if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Lead with %s: %v, want InvalidArgument naming %s", tc.desc, err, tc.want)
		}
		if verr := election.Validate(b, "k", "me", tc.opt); verr == nil || verr.Error() != err.Error() {
			t.Errorf("Validate with %s: %v, want Lead's %v", tc.desc, verr, err)
		}
		if n := b.calls.Load(); n != 0 {
			t.Errorf("%s: %d backend calls, want none", tc.desc, n)
		}
	}
	ok := []lock.Option{lock.WithTTL(2 * time.Second), lock.WithHeartbeat(lock.Heartbeat{Interval: 500 * time.Millisecond}),
		lock.WithReleaseErrorHandler(nil)}
	if err := election.Validate(&countingBackend{}, "k", "me", ok...); err != nil {
		t.Errorf("Validate with the options Lead uses: %v", err)
	}
}
