package otellock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// The reads of a lock.Recorder: a release with a mark is a release (see
// Hook.release); IsDone and Record are spans of their own.

// keyed observes a read of key's done marker (lock.OpIsDone, o is
// opIsDone) or record (lock.OpRecord, opRecord): a span whose outcome is
// "found" when there is one, else "not_found".
func (h *Hook) keyed(ctx context.Context, o op, op *lock.Op, next lock.OpFunc) error {
	ctx, c := h.begin(ctx, o)
	err := next(ctx, op)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 4), op.Key, h.rawKeys)
	}
	out := outNotFound
	if op.OK {
		out = outFound
	}
	h.end(ctx, c, out, err, attrs)
	return err
}
