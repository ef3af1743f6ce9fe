package election_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// TestOptions: the options Lead uses are accepted, a nil Option is
// ignored, later options override earlier ones, and TermTTL tells the
// TTL they set.
func TestOptions(t *testing.T) {
	b := &countingBackend{}
	ok := []election.Option{nil, election.WithTTL(2 * time.Second), election.WithHeartbeat(lock.Heartbeat{Interval: time.Second}),
		election.WithReleaseErrorHandler(nil)}
	if err := election.Validate(b, "k", "me", ok...); err != nil {
		t.Errorf("Validate with the options Lead uses: %v", err)
	}
	if err := election.Validate(b, "k", "me", election.WithTTL(0), election.WithTTL(time.Second)); err != nil {
		t.Errorf("Validate with a bad TTL overridden by a good one: %v", err)
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("Validate called the backend %d times, want 0", n)
	}
	for _, tc := range []struct {
		opts []election.Option
		want time.Duration
	}{
		{nil, 30 * time.Second},
		{[]election.Option{nil}, 30 * time.Second},
		{[]election.Option{election.WithTTL(5 * time.Second)}, 5 * time.Second},
		{[]election.Option{election.WithTTL(5 * time.Second), election.WithTTL(7 * time.Second)}, 7 * time.Second},
	} {
		if got := election.TermTTL(tc.opts...); got != tc.want {
			t.Errorf("TermTTL(%d options) = %v, want %v", len(tc.opts), got, tc.want)
		}
	}
}

// failingRelease grants one term and fails its release; it holds
// nothing else.
type failingRelease struct {
	countingBackend
	mu      sync.Mutex
	granted bool
}

var errRelease = errors.New("release refused")

func (f *failingRelease) Acquire(_ context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.granted {
		return lock.Lease{}, lock.ErrLocked
	}
	f.granted = true
	return lock.Lease{Key: key, ID: "aaaaaaaaaaaaaaaaaaaaaa", Fence: "000000000000001", TTL: ttl, ExpiresAt: time.Now().Add(ttl)}, nil
}

func (f *failingRelease) Release(context.Context, string) error { return errRelease }

func (f *failingRelease) Extend(_ context.Context, _ string, ttl time.Duration) (time.Time, error) {
	return time.Now().Add(ttl), nil
}

// TestReleaseErrorHandler: WithReleaseErrorHandler is told of a term's
// failed release, with the term's lease.
func TestReleaseErrorHandler(t *testing.T) {
	b := &failingRelease{}
	stop := errors.New("stop")
	type failure struct {
		l   lock.Lease
		err error
	}
	got := make(chan failure, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var term lock.Lease
	err := election.Lead(ctx, b, "k", "me", func(_ context.Context, l lock.Lease) error {
		term = l
		return stop
	}, election.WithTTL(10*time.Second), election.WithReleaseErrorHandler(func(l lock.Lease, err error) { got <- failure{l, err} }))
	if !errors.Is(err, stop) {
		t.Fatalf("Lead = %v, want fn's error", err)
	}
	select {
	case f := <-got:
		if f.l.ID != term.ID || !errors.Is(f.err, errRelease) {
			t.Errorf("handler told %+v, %v; want the term %s and the release's error", f.l, f.err, term.ID)
		}
	case <-ctx.Done():
		t.Fatal("the release error handler was not called")
	}
}
