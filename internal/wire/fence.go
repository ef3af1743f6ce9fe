package wire

import (
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Fence thresholds, as in syncguard: past FenceWarn a backend logs a warning
// (plan a key rotation); past FenceMax acquisition fails with [lock.CodeInternal].
const (
	// FenceWarn is the fence past which a backend logs a warning: a tenth
	// of FenceMax, time to plan a key rotation.
	FenceWarn lock.Fence = "090000000000000"
	// FenceMax is the highest fence granted; past it acquisition fails
	// with lock.CodeInternal and leaves no lock behind.
	FenceMax lock.Fence = "900000000000000"
)

// CheckFence validates a fence returned by a backend: well-formed and at
// most FenceMax. warn reports that it is past FenceWarn, when callers
// should log without the raw key.
func CheckFence(s string) (f lock.Fence, warn bool, err error) {
	f, err = lockdriver.ParseFence(s)
	if err != nil {
		return "", false, internalError("acquire", "backend returned a malformed fence", nil)
	}
	if f > FenceMax {
		return "", false, internalError("acquire", "fence counter exceeded "+string(FenceMax)+"; rotate to a new key", nil)
	}
	return f, f > FenceWarn, nil
}
