package transport

import "time"

// Re-sent commands. go-redis sends a command again when its reply did not
// come (a read timeout, a reset connection: up to MaxRetries times), and a
// command in a stalled server's socket buffer may run long after its
// client gave up on it. redisbackend's scripts are safe to run twice; a
// release keeps its answer for the resend window (release_lock.lua's
// tombstone), so that a copy of it answers what the first run did.

// Bounds of the resend window derived from a client's options.
const (
	minResendWindow = 5 * time.Second
	maxResendWindow = 2 * time.Minute
)

// defaultResendWindow is the window for a client whose options cannot be
// read: that of the defaults of the go-redis this module requires (3
// retries of a 5 s read timeout and a 1 s backoff; TestResendWindow checks
// it against a default client).
const defaultResendWindow = 3*(5*time.Second+time.Second) + time.Second

// ResendWindow returns how long after a command first ran go-redis may run
// a copy of it: one read timeout and one backoff per retry, plus a second,
// within [minResendWindow, maxResendWindow]. A client without read
// timeouts retries only on broken connections, soon after the first run.
// It reads the options of any client with go-redis's Options method (a
// *redis.Client, a failover client, a *redis.ClusterClient, or a wrapper
// embedding one); for any other client it returns defaultResendWindow.
func ResendWindow(client any) time.Duration {
	o, ok := optionsOf(client)
	if !ok {
		return defaultResendWindow
	}
	w := time.Duration(max(o.retries, 0))*(max(o.read, 0)+max(o.backoff, 0)) + time.Second
	return min(max(w, minResendWindow), maxResendWindow)
}
