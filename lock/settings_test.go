package lock_test

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TestResolve: the settings of a list of options, later ones overriding
// earlier ones; the defaults; the validation error.
func TestResolve(t *testing.T) {
	s, err := lock.Resolve(nil)
	if err != nil || s.TTL != lockdriver.DefaultTTL || s.Wait != lockdriver.DefaultWait || s.Heartbeat.Interval != 0 || s.Limit != 0 ||
		s.Retry.MaxRetries != lockdriver.DefaultMaxRetries || s.ReleaseTimeout != lockdriver.DefaultReleaseTimeout {
		t.Errorf("no options: %+v, %v", s, err)
	}
	s, err = lock.Resolve(nil, lock.WithTTL(time.Second), lock.WithTTL(2*time.Second),
		lock.WithHeartbeat(lock.Heartbeat{Interval: time.Second}), lock.WithLimit(2))
	if err != nil || s.TTL != 2*time.Second || s.Heartbeat.Interval != time.Second || s.Limit != 2 {
		t.Errorf("options: %+v, %v", s, err)
	}
	if _, err := lock.Resolve(nil, lock.WithTTL(-1)); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("bad TTL: %v, want InvalidArgument", err)
	}
}
