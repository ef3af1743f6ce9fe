package lock

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// TestQueuedPoll: a queued waiter's fallback comes just after the holder's
// lease ends (a slot's as a lock's: no tolerance), within
// [minQueuedPoll, contract.QueuedPollInterval].
func TestQueuedPoll(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	locked := func(in time.Duration) error { return &LockedError{ExpiresAt: now.Add(in)} }
	tests := []struct {
		desc string
		err  error
		want time.Duration
	}{
		{"a lease expiring in 300ms", locked(300 * time.Millisecond), 350 * time.Millisecond},
		{"a lease expiring in a minute: the interval", locked(time.Minute), contract.QueuedPollInterval},
		{"a lease already expired by this clock", locked(-time.Second), minQueuedPoll},
		{"unknown expiry: the interval", ErrLocked, contract.QueuedPollInterval},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := queuedPoll(tt.err, now); got != tt.want {
				t.Errorf("queuedPoll = %v, want %v", got, tt.want)
			}
		})
	}
}
