package transport

import "time"

// Bounds of the resend window derived from a client's options.
const (
	minResendWindow = 5 * time.Second
	maxResendWindow = 2 * time.Minute
)

// defaultResendWindow is the window of go-redis's default options, for a
// client whose options cannot be read.
const defaultResendWindow = 3*(5*time.Second+time.Second) + time.Second

// ResendWindow returns how long after a command first ran go-redis may run
// a copy of it (docs/client-retries.md).
func ResendWindow(client any) time.Duration {
	o, ok := optionsOf(client)
	if !ok {
		return defaultResendWindow
	}
	w := time.Duration(max(o.retries, 0))*(max(o.read, 0)+max(o.backoff, 0)) + time.Second
	return min(max(w, minResendWindow), maxResendWindow)
}
