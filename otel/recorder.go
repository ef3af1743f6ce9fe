package otellock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// The reads of a lock.Recorder: a release with a mark is a release (see
// Hook.release); IsDone and Record are spans of their own.

// keyed observes a yes-or-no read of key: whether it is locked
// (lock.OpIsLocked, o is lock.OpIsLocked: outcome "held" or "free"), or its
// done marker (lock.OpIsDone, lock.OpIsDone) or record (lock.OpRecord,
// lock.OpRecord): outcome "found" when there is one, else "not_found".
func (h *Hook) keyed(ctx context.Context, o lock.OpKind, op *lock.Op, next lock.OpFunc) error {
	ctx, c := h.begin(ctx, o)
	err := next(ctx, op)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 4), op.Key, h.rawKeys)
	}
	var out outcome
	switch o {
	case lock.OpIsLocked:
		out = pick(op.Held, outHeld, outFree)
	case lock.OpIsDone:
		out = pick(op.Done, outFound, outNotFound)
	default:
		out = pick(op.Found, outFound, outNotFound)
	}
	h.end(ctx, c, out, err, attrs)
	return err
}

// pick is yes when ok, else no.
func pick(ok bool, yes, no outcome) outcome {
	if ok {
		return yes
	}
	return no
}
