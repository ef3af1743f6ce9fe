package election_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// countingBackend counts every call; it holds nothing.
type countingBackend struct{ calls atomic.Int64 }

func (c *countingBackend) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	c.calls.Add(1)
	return lock.Lease{}, lock.ErrLocked
}
func (c *countingBackend) Release(context.Context, string) error { c.calls.Add(1); return nil }
func (c *countingBackend) Extend(context.Context, string, time.Duration) (time.Time, error) {
	c.calls.Add(1)
	return time.Time{}, lock.ErrNotHeld
}
func (c *countingBackend) IsLocked(context.Context, string) (bool, error) {
	c.calls.Add(1)
	return false, nil
}
func (c *countingBackend) LookupKey(context.Context, string) (*lock.Info, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *countingBackend) LookupID(context.Context, string) (*lock.Info, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *countingBackend) Capabilities() lock.Capabilities {
	return lock.Capabilities{Backend: "count"}
}

// TestElectionBadInput: bad arguments are InvalidArgument errors with a
// clear message, and nothing reaches the backend.
func TestElectionBadInput(t *testing.T) {
	b := &countingBackend{}
	var nilCtx context.Context
	ctx := context.Background()
	fn := func(context.Context, lock.Lease) error { return nil }
	for _, tc := range []struct {
		desc string
		err  func() error
		msg  string
	}{
		{"nil context", func() error { return election.Lead(nilCtx, b, "k", "a", fn) }, "context is nil"},
		{"nil backend", func() error { return election.Lead(ctx, nil, "k", "a", fn) }, "backend is nil"},
		{"empty key", func() error { return election.Lead(ctx, b, "", "a", fn) }, "key is empty"},
		{"long key", func() error { return election.Lead(ctx, b, strings.Repeat("k", 600), "a", fn) }, "key"},
		{"empty identity", func() error { return election.Lead(ctx, b, "k", "", fn) }, "identity is empty"},
		{"long identity", func() error { return election.Lead(ctx, b, "k", strings.Repeat("a", 257), fn) }, "at most 256 bytes"},
		{"identity not UTF-8", func() error { return election.Lead(ctx, b, "k", "\xff", fn) }, "UTF-8"},
		{"nil fn", func() error { return election.Lead(ctx, b, "k", "a", nil) }, "fn is nil"},
		{"short ttl", func() error { return election.Lead(ctx, b, "k", "a", fn, election.WithTTL(999*time.Millisecond)) }, "ttl must be at least 1s"},
		{"zero ttl", func() error { return election.Lead(ctx, b, "k", "a", fn, election.WithTTL(0)) }, "ttl must be at least 1s"},
		{"negative ttl", func() error { return election.Lead(ctx, b, "k", "a", fn, election.WithTTL(-1)) }, "ttl must be at least 1s"},
		{"slow heartbeat", func() error {
			return election.Lead(ctx, b, "k", "a", fn, election.WithTTL(3*time.Second), election.WithHeartbeat(lock.Heartbeat{Interval: 2 * time.Second}))
		}, "heartbeat interval must be at most half the ttl"},
		{"negative heartbeat", func() error {
			return election.Lead(ctx, b, "k", "a", fn, election.WithHeartbeat(lock.Heartbeat{Interval: -time.Second}))
		}, "heartbeat interval must not be negative"},
		{"Validate nil backend", func() error { return election.Validate(nil, "k", "a") }, "backend is nil"},
		{"Validate empty key", func() error { return election.Validate(b, "", "a") }, "key is empty"},
		{"Validate empty identity", func() error { return election.Validate(b, "k", "") }, "identity is empty"},
		{"Validate short ttl", func() error { return election.Validate(b, "k", "a", election.WithTTL(time.Millisecond)) }, "ttl must be at least 1s"},
		{"Validate slow heartbeat", func() error {
			return election.Validate(b, "k", "a", election.WithTTL(2*time.Second), election.WithHeartbeat(lock.Heartbeat{Interval: 1500 * time.Millisecond}))
		}, "heartbeat interval must be at most half the ttl"},
		{"LeaderOf empty key", func() error { _, err := election.LeaderOf(ctx, b, ""); return err }, "key is empty"},
		{"LeaderOf nil backend", func() error { _, err := election.LeaderOf(ctx, nil, "k"); return err }, "backend is nil"},
		{"Observe empty key", func() error { _, err := election.Observe(ctx, b, ""); return err }, "key is empty"},
	} {
		err := tc.err()
		if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want InvalidArgument saying %q", tc.desc, err, tc.msg)
		}
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("backend called %d times, want 0", n)
	}
}
