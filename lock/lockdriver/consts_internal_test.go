package lockdriver

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// TestConstsAreLocks: the constants lockdriver documents are the ones
// package lock uses.
func TestConstsAreLocks(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"MaxKeyBytes", MaxKeyBytes, contract.MaxKeyBytes},
		{"FenceDigits", FenceDigits, contract.FenceDigits},
		{"MaxLimit", MaxLimit, contract.MaxLimit},
		{"TimeTolerance", TimeTolerance, contract.TimeTolerance},
		{"QueuedPollInterval", QueuedPollInterval, contract.QueuedPollInterval},
		{"DefaultTTL", DefaultTTL, contract.DefaultTTL},
		{"DefaultWait", DefaultWait, contract.DefaultWait},
		{"DefaultMaxRetries", DefaultMaxRetries, contract.DefaultMaxRetries},
		{"DefaultBaseDelay", DefaultBaseDelay, contract.DefaultBaseDelay},
		{"DefaultReleaseTimeout", DefaultReleaseTimeout, contract.DefaultReleaseTimeout},
	} {
		if c.got != c.want {
			t.Errorf("lockdriver.%s = %v, package lock uses %v", c.name, c.got, c.want)
		}
	}
}
