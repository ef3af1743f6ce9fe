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

// OpFunc runs an operation: it sets op's results and returns its error.
type OpFunc func(ctx context.Context, op *Op) error

// WithHooks returns b with hooks around each of its operations and the
// events of Acquire, Do, Hold, Keep and lock/election's Lead on it (the
// OpKind constants from OpWait on); the first hook is the outermost, as
// with go-redis's AddHook. The result has exactly b's extensions
// ([IDBackend], [Recorder]) and an Unwrap method returning b; wrapping
// again nests the new hooks outside.
// b must not be nil, nor any hook.
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

// Emit runs the event op through the hooks of b when b comes from
// WithHooks, then body (which may be nil). Packages built on lock emit
// their events with it, as lock/election does a term (OpTerm).
func Emit(ctx context.Context, b Backend, op *Op, body OpFunc) error {
	op.body = body
	if hc, ok := b.(hookChain); ok {
		return hc.chain().run(ctx, op)
	}
	if body != nil {
		return body(ctx, op)
	}
	return nil
}
