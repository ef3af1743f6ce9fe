package lock

import "strconv"

// Fence is a fencing token: a 15-digit zero-padded decimal string that
// strictly increases per key with every grant. Because the width is fixed,
// plain string comparison orders fences, as does [Fence.Compare].
//
// Pass the fence with every write to the protected resource and have the
// resource reject a write whose fence is lower than the highest it has
// accepted; that rejects writes from a holder whose lease has expired.
type Fence string

// FenceDigits is the width of a Fence.
const FenceDigits = 15

// Fence thresholds, as in syncguard: past FenceWarn a backend logs a warning
// (plan a key rotation); past FenceMax acquisition fails with [CodeInternal].
const (
	// FenceWarn is the fence past which a backend logs a warning: a tenth
	// of FenceMax, time to plan a key rotation.
	FenceWarn Fence = "090000000000000"
	// FenceMax is the highest fence granted; past it acquisition fails
	// with CodeInternal and leaves no lock behind.
	FenceMax Fence = "900000000000000"
)

// FormatFence formats n as a Fence. It returns [CodeInvalidArgument] when n
// does not fit in FenceDigits digits.
func FormatFence(n uint64) (Fence, error) {
	if n > 999999999999999 {
		return "", invalid("fence", "fence value exceeds 15 digits")
	}
	var b [FenceDigits]byte
	for i := FenceDigits - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return Fence(b[:]), nil
}

// ParseFence checks that s is a well-formed fence (exactly 15 ASCII
// digits) and returns it, or an error with [CodeInvalidArgument].
func ParseFence(s string) (Fence, error) {
	if len(s) != FenceDigits {
		return "", invalid("fence", "fence must be 15 decimal digits")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", invalid("fence", "fence must be 15 decimal digits")
		}
	}
	return Fence(s), nil
}

// Uint64 returns the fence's numeric value; ok is false for a malformed
// fence.
func (f Fence) Uint64() (n uint64, ok bool) {
	if _, err := ParseFence(string(f)); err != nil {
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

// CheckFence validates a fence returned by a backend: it must be
// well-formed and at most FenceMax. warn reports that it is past FenceWarn,
// when callers should log (without the raw key) and plan a key rotation.
// Backends use it so the thresholds live in one place.
func CheckFence(s string) (f Fence, warn bool, err error) {
	f, err = ParseFence(s)
	if err != nil {
		return "", false, newError(CodeInternal, "acquire", "backend returned a malformed fence", nil)
	}
	if f > FenceMax {
		return "", false, newError(CodeInternal, "acquire", "fence counter exceeded "+string(FenceMax)+"; rotate to a new key", nil)
	}
	return f, f > FenceWarn, nil
}
