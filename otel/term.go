package otellock

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// term observes lock.OpTerm, a term of lock/election's Lead: the
// "syncguard.term" span from the term's start to its end, with the leader's
// work under it, and the term counter and the leading gauge (up while next
// runs), by the key's hash.
func (h *Hook) term(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	by := metric.WithAttributeSet(attribute.NewSet(KeyHashKey.String(lockdriver.HashKey(op.Key)), h.inst.backend))
	h.inst.term.Add(ctx, 1, by)
	h.inst.termActive.Add(ctx, 1, by)
	defer h.inst.termActive.Add(ctx, -1, by)
	sctx, span := h.startSpan(ctx, lock.OpTerm)
	if span == nil {
		return next(ctx, op)
	}
	attrs := keyAttrs(make([]attribute.KeyValue, 0, 8), op.Key, h.rawKeys)
	span.SetAttributes(append(attrs,
		FenceKey.String(string(op.Lease.Fence)),
		LockIDHashKey.String(lockdriver.HashKey(op.Lease.ID)),
		IdentityHashKey.String(lockdriver.HashKey(op.Identity)),
		h.inst.backend,
	)...)
	err := next(sctx, op)
	out := termOutcome(sctx, err)
	span.SetAttributes(OutcomeKey.String(out))
	if out == OutcomeLost || out == OutcomeError {
		setError(span, err)
	}
	span.End()
	return err
}

// termOutcome is how a term ended: next returned err under ctx, the term's
// context, which has ended when the term was lost or Lead stopped.
func termOutcome(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil && errors.Is(err, lock.ErrLeaseLost):
		return OutcomeLost
	case ctx.Err() != nil:
		return OutcomeStopped
	case err != nil:
		return OutcomeError
	}
	return OutcomeResigned
}
