package contract

import "context"

// handoffKey is the context key of a release's Handoff.
type handoffKey struct{}

// Handoff is the context of a release with hooks, where its backend tells
// them that it handed the lock on (lockdriver.HandedOver); every layer of
// hooks of one release shares it. One allocation, the context and the
// place at once.
type Handoff struct {
	context.Context
	// To is the fence of the lease the release handed over; "" when none.
	To string
}

// Value returns the Handoff itself for its key.
func (h *Handoff) Value(key any) any {
	if key == (handoffKey{}) {
		return h
	}
	return h.Context.Value(key)
}

// WithHandoff returns ctx carrying the Handoff of a release, its own or
// that of the hooks around it.
func WithHandoff(ctx context.Context) (context.Context, *Handoff) {
	if h, ok := ctx.Value(handoffKey{}).(*Handoff); ok {
		return ctx, h
	}
	h := &Handoff{Context: ctx}
	return h, h
}

// HandedOver records, in the Handoff ctx carries if any, that the release
// running under ctx handed the lock over as a lease with fence to.
func HandedOver(ctx context.Context, to string) {
	if h, ok := ctx.Value(handoffKey{}).(*Handoff); ok {
		h.To = to
	}
}
