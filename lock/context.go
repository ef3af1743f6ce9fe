package lock

import "context"

// leaseKey is the context key of the lease set by Do and Hold.
type leaseKey struct{}

// LeaseFrom returns the lease of a context from [Do] or [Hold], and so of
// the adapters built on them: data-layer code reads its [Fence] there.
// Whether the lease is still held is what the context's end tells.
func LeaseFrom(ctx context.Context) (Lease, bool) {
	l, ok := ctx.Value(leaseKey{}).(Lease)
	return l, ok
}

// withLease returns a child of ctx carrying l for LeaseFrom.
func withLease(ctx context.Context, l Lease) context.Context {
	return context.WithValue(ctx, leaseKey{}, l)
}
