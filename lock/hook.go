package lock

import "context"

// Hook observes the operations on a Backend wrapped by [WithHooks], as
// go-redis's hooks observe commands: Operation is given the next function
// of the chain and returns the function to call instead, which may work
// before and after calling next (start a span, time the call, record a
// history) and must call next once for the operation to run. Operation is
// called once, when the chain is built. A hook reads op's kind and
// arguments and must not change them (the end of the chain runs the
// operation they name); op is valid only until the OpFunc returns, and a
// hook must not keep it: the Ops of calls are reused, and under the race
// detector a hook that reads a kept Op is reported.
type Hook interface {
	Operation(next OpFunc) OpFunc
}

// HookFunc adapts a function to a [Hook].
type HookFunc func(next OpFunc) OpFunc

// Operation calls f(next).
func (f HookFunc) Operation(next OpFunc) OpFunc { return f(next) }

// OpFunc runs an operation: it sets op's results and returns its error.
type OpFunc func(ctx context.Context, op *Op) error

// WithHooks returns b with hooks around each of its operations: the
// first hook is the outermost, as with go-redis's AddHook. The result has
// exactly b's extensions ([IDBackend], [Recorder]), so a wrapped backend
// keeps what it can do and claims nothing more; Acquire, Do, Hold and Keep
// also pass their events (OpWait, OpRetry, OpGranted, OpLeaseLost)
// through the hooks. Wrapping a wrapped backend nests the new hooks
// outside the old ones. Capabilities is not an operation. b must not be
// nil, nor any hook.
func WithHooks(b Backend, hooks ...Hook) Backend {
	if b == nil {
		panic("lock: WithHooks(nil, ...)")
	}
	h := &hooked{b: b}
	h.id, _ = b.(IDBackend)
	h.rec, _ = b.(Recorder)
	h.run = h.terminal
	for i := len(hooks) - 1; i >= 0; i-- {
		if hooks[i] == nil {
			panic("lock: WithHooks with a nil Hook")
		}
		h.run = hooks[i].Operation(h.run)
	}
	switch {
	case h.id != nil && h.rec != nil:
		return &hookedAll{hooked: h, idOps: idOps{h}, recOps: recOps{h}}
	case h.id != nil:
		return &hookedID{hooked: h, idOps: idOps{h}}
	case h.rec != nil:
		return &hookedRec{hooked: h, recOps: recOps{h}}
	}
	return h
}

// hookChain is what every backend WithHooks returns has.
type hookChain interface{ chain() *hooked }

// emit passes the event op through b's hooks, if any, and then runs its
// body (which may be nil).
func emit(ctx context.Context, b Backend, op *Op, body OpFunc) error {
	op.body = body
	if hc, ok := b.(hookChain); ok {
		return hc.chain().run(ctx, op)
	}
	if body != nil {
		return body(ctx, op)
	}
	return nil
}

// handoffKey is the context key of the handoff a release's hooks read.
type handoffKey struct{}

// handoff is the context of a release with hooks, where its backend tells
// them that it handed the lock on (HandedOver); every layer of hooks of one
// release shares it. One allocation, the context and the place at once.
type handoff struct {
	context.Context
	to Fence
}

// Value returns the handoff itself for handoffKey.
func (h *handoff) Value(key any) any {
	if key == (handoffKey{}) {
		return h
	}
	return h.Context.Value(key)
}

// HandedOver is for backends: a release running under ctx that handed the
// lock (or a slot) to a waiter, as a new lease with fence to, calls it, so
// the release's hooks see it in [Op].HandedTo. It does nothing when the
// release has no hooks.
func HandedOver(ctx context.Context, to Fence) {
	if h, ok := ctx.Value(handoffKey{}).(*handoff); ok {
		h.to = to
	}
}

// withHandoff returns ctx carrying the handoff of a release, its own or
// that of the hooks around it.
func withHandoff(ctx context.Context) (context.Context, *handoff) {
	if h, ok := ctx.Value(handoffKey{}).(*handoff); ok {
		return ctx, h
	}
	h := &handoff{Context: ctx}
	return h, h
}
