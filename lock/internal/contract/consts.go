package contract

import "time"

// The constants of syncguard's contract and of lock's defaults, which
// lockdriver exports under the same names (its tests pin the values).
const (
	MaxKeyBytes        = 512
	FenceDigits        = 15
	MaxLimit           = 10000
	TimeTolerance      = time.Second
	QueuedPollInterval = time.Second

	DefaultTTL            = 30 * time.Second
	DefaultWait           = 5 * time.Second
	DefaultMaxRetries     = 10
	DefaultBaseDelay      = 100 * time.Millisecond
	DefaultReleaseTimeout = 5 * time.Second
)
