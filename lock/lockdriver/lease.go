package lockdriver

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"strconv"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// LockIDLen is the length of a lock id.
const LockIDLen = 22

// randReader is the source of lock ids.
var randReader io.Reader = rand.Reader

// NewLockID returns a new lock id: 16 bytes from crypto/rand in unpadded
// base64url, the syncguard format.
func NewLockID() string {
	var b [16]byte
	if err := readRandom(b[:]); err != nil {
		// A lock id without entropy would be guessable.
		panic("syncguard: crypto/rand failed: " + err.Error())
	}
	var out [LockIDLen]byte // on the stack
	base64.RawURLEncoding.Encode(out[:], b[:])
	return string(out[:])
}

// ValidateLockID returns an InvalidArgument error unless id is 22
// base64url characters.
func ValidateLockID(id string) error {
	if len(id) != LockIDLen {
		return InvalidArgument("validate", "lock id must be "+strconv.Itoa(LockIDLen)+" base64url characters")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return InvalidArgument("validate", "lock id must be "+strconv.Itoa(LockIDLen)+" base64url characters")
		}
	}
	return nil
}

// readRandom fills b from randReader, keeping b on the stack.
func readRandom(b []byte) error {
	if randReader == rand.Reader {
		_, err := rand.Read(b)
		return err
	}
	buf := make([]byte, len(b))
	_, err := io.ReadFull(randReader, buf)
	copy(b, buf)
	return err
}

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
