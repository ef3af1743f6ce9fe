package contract

import "context"

// Term runs a term of lock/election's Lead as an event through the hooks
// of a backend (lock.OpTerm): lock sets it in its init, and package
// lock/internal/event calls it with its arguments typed (event imports
// lock, so lock's init has run by then). b is a lock.Backend, l a
// lock.Lease.
var Term func(ctx context.Context, b, l any, identity string, run func(ctx context.Context) error) error
