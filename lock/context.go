package lock

import "context"

// leaseKey is the context key of the lease set by Do and Hold.
type leaseKey struct{}

// LeaseFrom returns the lease under which ctx runs: the one set on the
// context that [Do] passes to its function and that [Hold] returns, and so
// on the contexts that the middleware and job adapters built on them hand
// to handlers. Data-layer code reads the lease's [Fence] from it without
// importing an adapter. It reports false for a context from anywhere else.
// The lease is the one that was granted; whether it is still held is what
// the context's cancellation tells.
func LeaseFrom(ctx context.Context) (Lease, bool) {
	l, ok := ctx.Value(leaseKey{}).(Lease)
	return l, ok
}

// withLease returns a child of ctx carrying l for LeaseFrom.
func withLease(ctx context.Context, l Lease) context.Context {
	return context.WithValue(ctx, leaseKey{}, l)
}
