package lock

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// TestQueuedPoll: a queued waiter's fallback comes just after the holder's
// lease ends (for a slot, the time tolerance later), within
// [minQueuedPoll, contract.QueuedPollInterval].
func TestQueuedPoll(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	locked := func(in time.Duration) error { return &LockedError{ExpiresAt: now.Add(in)} }
	tests := []struct {
		desc string
		err  error
		slot bool
		want time.Duration
	}{
		{"a lock expiring in 300ms", locked(300 * time.Millisecond), false, 350 * time.Millisecond},
		{"a lock expiring in a minute: the interval", locked(time.Minute), false, contract.QueuedPollInterval},
		{"a lock already expired by this clock", locked(-time.Second), false, minQueuedPoll},
		{"a slot expired 200ms ago: live for the tolerance", locked(-200 * time.Millisecond), true, 850 * time.Millisecond},
		{"a slot expired long ago", locked(-time.Minute), true, minQueuedPoll},
		{"unknown expiry: the interval", ErrLocked, false, contract.QueuedPollInterval},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := queuedPoll(tt.err, now, tt.slot); got != tt.want {
				t.Errorf("queuedPoll = %v, want %v", got, tt.want)
			}
		})
	}
}
