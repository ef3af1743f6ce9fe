package contract

// The option validation of package lock, which needs lock's unexported
// configuration: lock sets these in its init, and lockdriver's
// ValidateOptions and ValidateLimit call them (lockdriver imports lock, so
// lock's init has run by then). opts is a []lock.Option, b a lock.Backend.
var (
	ValidateOptions func(opts any) error
	ValidateLimit   func(b any, n int) error
)
