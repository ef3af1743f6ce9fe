package redisbackend

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Re-sent commands. go-redis sends a command again when its reply did not
// come (a read timeout, a reset connection: MaxRetries, 3 by default), and
// a command in a stalled server's socket buffer may run long after its
// client gave up on it. Every script is safe to run twice (see the scripts'
// headers): an acquisition that finds its own lease returns it, and a
// release (or an extension that finds the lease expired) replaces the
// lease's index key by a tombstone that
// keeps its result for the resend window, so a second run of a release
// answers what the first one did and a late acquisition with that id takes
// nothing. A release carries a nonce unique to the call, so only copies of
// that call get its answer: a second Release call of a released lease still
// finds the lease not held.

// Bounds of the resend window derived from a client's options.
const (
	minResendWindow = 5 * time.Second
	maxResendWindow = 2 * time.Minute
)

// defaultResendWindow is the window for a client whose options New cannot
// read: go-redis's defaults (3 retries, 3 s read timeout, 512 ms backoff).
const defaultResendWindow = 3*(3*time.Second+512*time.Millisecond) + time.Second

// Values of Features.ResendWindowFrom.
const (
	windowFromOption   = "Options.ResendWindow"
	windowFromClient   = "the client's options"
	windowFromDefaults = "go-redis's defaults: the client has no Options method"
)

// resendWindow returns how long after a command first ran go-redis may run
// a copy of it: one read timeout and one backoff per retry, plus a second,
// within [minResendWindow, maxResendWindow]. A client without read timeouts
// retries only on broken connections, soon after the first run. It reads
// the options of any client with go-redis's Options method (a *redis.Client,
// a failover client, a *redis.ClusterClient, or a wrapper embedding one);
// from says which source it used.
func resendWindow(client redis.Scripter) (w time.Duration, from string) {
	o, ok := optionsOf(client)
	if !ok {
		return defaultResendWindow, windowFromDefaults
	}
	retries, read, backoff := o.retries, o.read, o.backoff
	w = time.Duration(max(retries, 0))*(max(read, 0)+max(backoff, 0)) + time.Second
	return min(max(w, minResendWindow), maxResendWindow), windowFromClient
}

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
	return b.nonceBase + strconv.FormatUint(b.calls.Add(1), 36)
}
