package lock

import (
	"strconv"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Fence is a fencing token: 15 zero-padded digits that grow per key with
// every grant, so string comparison orders fences. Pass it with each
// write; the resource refuses a fence lower than the highest it saw.
type Fence string

// Uint64 returns the fence's numeric value; ok is false for a malformed
// fence.
func (f Fence) Uint64() (n uint64, ok bool) {
	if !contract.IsFence(string(f)) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(f), 10, 64)
	return n, err == nil
}

// Compare returns -1, 0 or +1 as f is older than, equal to, or newer than g.
// Both must be well-formed; malformed fences compare as strings.
func (f Fence) Compare(g Fence) int {
	switch {
	case f < g:
		return -1
	case f > g:
		return 1
	}
	return 0
}

// String returns the fence's digits.
func (f Fence) String() string { return string(f) }
