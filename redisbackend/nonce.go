package redisbackend

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
)

// Re-sent commands. go-redis sends a command again when its reply did not
// come (a read timeout, a reset connection: up to MaxRetries times), and a
// command in a stalled server's socket buffer may run long after its
// client gave up on it. Every script is safe to run twice (see the
// scripts' headers): an acquisition that finds its own lease returns it,
// and a release (or an extension that finds the lease expired) replaces
// the lease's index key by a tombstone that keeps its result for the
// resend window (Options.ResendWindow, transport.ResendWindow), so a
// second run of a release answers what the first one did and a late
// acquisition with that id takes nothing. A release carries a nonce
// unique to the call, so only copies of that call get its answer: a
// second Release call of a released lease still finds the lease not held.

// newNonceBase returns the random start of this Backend's call nonces
// (48 bits, so Backends in a fleet do not share nonces).
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
	var buf [32]byte // one allocation: the string
	n := strconv.AppendUint(append(buf[:0], b.nonceBase...), b.calls.Add(1), 36)
	return string(n)
}
