package lock

import "context"

// Hook observes the operations on a Backend wrapped by [WithHooks], as
// go-redis's hooks observe commands. Operation gets the next function of
// the chain, once, and returns the function to call instead, which must
// call next once. A hook must not change op, nor keep it after its OpFunc
// returns: Ops are reused.
type Hook interface {
	Operation(next OpFunc) OpFunc
}

// OpFunc runs an operation: it sets op's results and returns its error.
type OpFunc func(ctx context.Context, op *Op) error

// WithHooks returns b with hooks around its operations and the events of
// the calls on it. The first hook is the outermost. The result has b's
// extensions, its [Locals], and an Unwrap method returning b. b and the
// hooks must not be nil.
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

// Emit runs the event op through b's hooks, if any, then body, which may
// be nil. lock/election emits its terms with it.
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
