package otellock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// term observes lock.OpTerm, a term of election.Lead: the "syncguard.term"
// span, with the leader's work under it, and the term metrics. A panic of
// the leader's function ends them too.
func (h *Hook) term(ctx context.Context, op *lock.Op, next lock.OpFunc) (err error) {
	keyHash := KeyHashKey.String(lockdriver.HashKey(op.Key))
	by := metric.WithAttributeSet(attribute.NewSet(keyHash, h.inst.backend))
	h.inst.term.Add(ctx, 1, by)
	h.inst.termActive.Add(ctx, 1, by)
	began := time.Now()
	sctx, span := h.startSpan(ctx, lock.OpTerm)
	if span != nil {
		attrs := keyAttrs(make([]attribute.KeyValue, 0, 8), op.Key, h.rawKeys)
		span.SetAttributes(append(attrs,
			FenceKey.String(string(op.Lease.Fence)),
			LockIDHashKey.String(lockdriver.HashKey(op.Lease.ID)),
			IdentityHashKey.String(IdentityHash(op.Identity)),
			h.inst.backend,
		)...)
	}
	out := OutcomePanicked
	defer func() {
		h.inst.termActive.Add(ctx, -1, by)
		h.inst.termTime.Record(ctx, seconds(time.Since(began)),
			metric.WithAttributeSet(attribute.NewSet(keyHash, OutcomeKey.String(out), h.inst.backend)))
		if span == nil {
			return
		}
		span.SetAttributes(OutcomeKey.String(out))
		switch out {
		case OutcomeLost, OutcomeError:
			setError(span, err)
		case OutcomePanicked:
			setError(span, errors.New("the leader's function panicked"))
		}
		span.End()
	}()
	err = next(sctx, op)
	out = termOutcome(sctx, err)
	return err
}

// IdentityHash is the hash of a leader's identity that term spans carry:
// the first 12 bytes of its SHA-256, in hex. It shows none of the
// identity's bytes, but an operator can hash a guess to find a span.
func IdentityHash(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return hex.EncodeToString(sum[:12])
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
