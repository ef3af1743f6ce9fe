package lock

import "time"

// TimeTolerance is syncguard's fixed clock tolerance: a lease counts as
// live until TimeTolerance after its expiry, so small clock differences
// between the store's nodes never shorten a lease.
const TimeTolerance = time.Second

// TimeToleranceMs is TimeTolerance in milliseconds, as passed to scripts.
const TimeToleranceMs = int64(TimeTolerance / time.Millisecond)

// IsLive is syncguard's liveness predicate: a lease expiring at expiresAtMs
// is live at nowMs (both Unix milliseconds by the same clock) iff
// expiresAtMs > nowMs - TimeToleranceMs.
func IsLive(expiresAtMs, nowMs int64) bool {
	return expiresAtMs > nowMs-TimeToleranceMs
}
