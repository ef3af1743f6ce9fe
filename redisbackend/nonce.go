package redisbackend

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
)

// A release carries a nonce unique to the call, so only re-sent copies of
// that call get its tombstone's answer (docs/client-retries.md).

// newNonceBase returns the random start of this Backend's call nonces.
func newNonceBase() string {
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic("syncguard: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(r[:])
}

// nonce returns a string unique to one release call, the same in every
// copy of its command that go-redis sends.
func (b *Backend) nonce() string {
	var buf [32]byte
	n := strconv.AppendUint(append(buf[:0], b.nonceBase...), b.calls.Add(1), 36)
	return string(n)
}
