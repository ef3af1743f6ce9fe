package wire

import (
	"time"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TimeToleranceMs is lockdriver.TimeTolerance in milliseconds, as passed to scripts.
const TimeToleranceMs = int64(lockdriver.TimeTolerance / time.Millisecond)

// IsLive is syncguard's liveness predicate: a lease expiring at expiresAtMs
// is live at nowMs (both Unix milliseconds by the same clock) iff
// expiresAtMs > nowMs - TimeToleranceMs.
func IsLive(expiresAtMs, nowMs int64) bool {
	return expiresAtMs > nowMs-TimeToleranceMs
}
