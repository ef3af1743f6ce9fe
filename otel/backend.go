package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// The telemetry of the operations of lock.Backend, and of the
// acquisitions of its lock.IDBackend extension (AcquireID, AcquireSlot
// and Waiter.Attempt are acquisitions too).

// acquire observes an acquisition (lock.OpAcquire): of the lock, or of a
// slot of a limit when op.Limit > 0.
func (h *Hook) acquire(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	n := max(op.Limit, 0)
	ctx, c := h.begin(ctx, lock.OpAcquire)
	c.limit = n
	err := next(ctx, op)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 9), op.Key, h.rawKeys)
		attrs = append(attrs, TTLKey.Float64(seconds(op.TTL)))
		attrs = slotAttrs(attrs, n)
		if err == nil {
			attrs = append(attrs, FenceKey.String(string(op.Lease.Fence)), LockIDHashKey.String(lock.HashKey(op.Lease.ID)))
		}
	}
	switch h.end(ctx, c, outAcquired, err, attrs) {
	case outAcquired:
		h.track(ctx, op.Lease)
	case outLocked:
		if n > 0 {
			h.inst.contention.Add(ctx, 1, h.inst.limitSets(n).add...)
		} else {
			h.inst.contention.Add(ctx, 1, h.inst.backendAdd...)
		}
	}
	return err
}

// track starts the held-duration measurement of lease l, granted now.
func (h *Hook) track(ctx context.Context, l lock.Lease) {
	if h.inst.held.Enabled(ctx) {
		h.held.add(l, time.Now())
	}
}

// release observes a release (lock.OpRelease), with a mark or without:
// a "syncguard.release" span, and how long the lease was held when it was
// granted through this hook.
func (h *Hook) release(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	ctx, c := h.begin(ctx, lock.OpRelease)
	err := next(ctx, op)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = append(make([]attribute.KeyValue, 0, 5), LockIDHashKey.String(lock.HashKey(op.ID)))
		if op.HandedTo != "" {
			attrs = append(attrs, HandoffKey.Bool(true), HandoffFenceKey.String(string(op.HandedTo)))
		}
	}
	if out := h.end(ctx, c, outReleased, err, attrs); out != outError && h.held.len() > 0 {
		// Released, or not held any more: either way the lease is over.
		if acquired, ok := h.held.remove(op.ID); ok && out == outReleased {
			h.inst.held.Record(ctx, seconds(time.Since(acquired)), h.inst.backendRecord...)
		}
	}
	return err
}

// extend observes an extend (lock.OpExtend): a "syncguard.extend" span.
func (h *Hook) extend(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	ctx, c := h.begin(ctx, lock.OpExtend)
	err := next(ctx, op)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = append(make([]attribute.KeyValue, 0, 4), LockIDHashKey.String(lock.HashKey(op.ID)), TTLKey.Float64(seconds(op.TTL)))
	}
	h.trackExtend(op.ID, h.end(ctx, c, outExtended, err, attrs), op.ExpiresAt)
	return err
}

// trackExtend updates the held-duration tracker after an extend of lease
// id: a new expiry, or the lease gone (a system error tells nothing).
func (h *Hook) trackExtend(id string, out outcome, exp time.Time) {
	switch {
	case h.held.len() == 0:
	case out == outExtended:
		h.held.extend(id, exp)
	case out != outError:
		h.held.remove(id)
	}
}

// lookup observes lock.OpLookupKey and lock.OpLookupID: a
// "syncguard.lookup_key" or "syncguard.lookup_id" span.
func (h *Hook) lookup(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	ctx, c := h.begin(ctx, op.Kind)
	err := next(ctx, op)
	var attrs []attribute.KeyValue
	if c.span != nil {
		byID := op.Kind == lock.OpLookupID
		if byID {
			attrs = append(make([]attribute.KeyValue, 0, 6), LockIDHashKey.String(lock.HashKey(op.ID)), LookupByKey.String("id"))
		} else {
			attrs = keyAttrs(make([]attribute.KeyValue, 0, 6), op.Key, h.rawKeys)
			attrs = append(attrs, LookupByKey.String("key"))
		}
		attrs = appendInfo(attrs, op.Info, byID)
	}
	out := outFound
	if op.Info == nil {
		out = outNotFound
	}
	h.end(ctx, c, out, err, attrs)
	return err
}

// appendInfo adds what a lookup found: the fence, and the key hash when
// the lookup was by id.
func appendInfo(attrs []attribute.KeyValue, info *lock.Info, byID bool) []attribute.KeyValue {
	if info == nil {
		return attrs
	}
	attrs = append(attrs, FenceKey.String(string(info.Fence)))
	if byID && info.KeyHash != "" {
		attrs = append(attrs, KeyHashKey.String(info.KeyHash))
	}
	return attrs
}
