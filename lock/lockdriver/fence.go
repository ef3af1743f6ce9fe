package lockdriver

import (
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// FenceDigits is the width of a lock.Fence.
const FenceDigits = contract.FenceDigits // 15

// ParseFence returns s as a Fence, or an InvalidArgument error unless it
// is FenceDigits ASCII digits.
func ParseFence(s string) (lock.Fence, error) {
	if !contract.IsFence(s) {
		return "", InvalidArgument("fence", "fence must be 15 decimal digits")
	}
	return lock.Fence(s), nil
}

// FormatFence formats n as a Fence, or returns an InvalidArgument error
// when n has more than FenceDigits digits.
func FormatFence(n uint64) (lock.Fence, error) {
	if n > 999999999999999 {
		return "", InvalidArgument("fence", "fence value exceeds 15 digits")
	}
	var b [FenceDigits]byte
	for i := FenceDigits - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return lock.Fence(b[:]), nil
}
