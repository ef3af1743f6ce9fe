package lockdriver

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"strconv"
)

// LockIDLen is the length of a lock id: 16 random bytes in unpadded
// base64url.
const LockIDLen = 22

// randReader is the source of lock ids; tests check it is crypto/rand.
var randReader io.Reader = rand.Reader

// NewLockID returns a new lock id: 128 bits from crypto/rand encoded as 22
// unpadded base64url characters, the syncguard format. A backend's
// IDBackend.NewLockID and Acquire use it.
func NewLockID() string {
	var b [16]byte
	if err := readRandom(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a lock id
		// without entropy would be guessable, so refuse to go on.
		panic("syncguard: crypto/rand failed: " + err.Error())
	}
	var out [LockIDLen]byte // encoded on the stack: one allocation, the string
	base64.RawURLEncoding.Encode(out[:], b[:])
	return string(out[:])
}

// ValidateLockID checks that id has the lock id format
// ^[A-Za-z0-9_-]{22}$ and returns [lock.CodeInvalidArgument] otherwise. Backends
// call it before any I/O.
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

// readRandom fills b from randReader: with crypto/rand's Read when it is
// crypto/rand's Reader, which lets b stay on the caller's stack (a Read
// through an io.Reader would not).
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
