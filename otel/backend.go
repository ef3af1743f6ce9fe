package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// operation observes a call of a Backend method (every lock.OpKind before
// lock.OpWait but lock.OpExtendBatch): a span named from its kind, with the
// attributes of what op names and found, the operation-duration histogram,
// and the bookkeeping of the kinds whose metrics differ (acquire, release,
// extend).
func (h *Hook) operation(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	ctx, c := h.begin(ctx, op.Kind)
	if op.Kind == lock.OpAcquire {
		c.limit = max(op.Limit, 0)
	}
	err := next(ctx, op)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = h.opAttrs(make([]attribute.KeyValue, 0, 6), op, c.limit, err)
	}
	out := h.end(ctx, c, succeeded(op), err, attrs)
	switch op.Kind {
	case lock.OpAcquire:
		h.acquired(ctx, op.Lease, c.limit, out)
	case lock.OpRelease, lock.OpReleaseDone, lock.OpReleaseRecord:
		h.released(ctx, op.ID, out)
	case lock.OpExtend:
		h.trackExtend(op.ID, out, op.ExpiresAt)
	}
	return err
}

// succeeded is the outcome of op when next returned no error.
func succeeded(op *lock.Op) outcome {
	switch op.Kind {
	case lock.OpAcquire:
		if op.Lease.ID == "" && (op.Found || op.Done) {
			return outFound // Recorder.AcquireRecord or AcquireDone answered with the mark
		}
		return outAcquired
	case lock.OpRelease, lock.OpReleaseDone, lock.OpReleaseRecord:
		return outReleased
	case lock.OpExtend:
		return outExtended
	case lock.OpIsLocked:
		if op.Held {
			return outHeld
		}
		return outFree
	}
	if op.Done || op.Found || op.Info != nil || op.LimitInfo != nil {
		return outFound
	}
	return outNotFound
}

// opAttrs appends the span attributes of op, whose call ended with err:
// the key and lock id it names or was granted (hashed), the TTL it asks
// for, the limit n of a slot, and what it found or granted.
func (h *Hook) opAttrs(attrs []attribute.KeyValue, op *lock.Op, n int, err error) []attribute.KeyValue {
	if op.Key != "" || namesKey(op.Kind) {
		attrs = keyAttrs(attrs, op.Key, h.rawKeys)
	}
	if id := op.ID; id != "" || op.Lease.ID != "" {
		if id == "" {
			id = op.Lease.ID
		}
		attrs = append(attrs, LockIDHashKey.String(lockdriver.HashKey(id)))
	}
	if op.TTL > 0 {
		attrs = append(attrs, TTLKey.Float64(seconds(op.TTL)))
	}
	attrs = slotAttrs(attrs, n)
	if op.Mode != "" {
		attrs = append(attrs, ModeKey.String(op.Mode))
	}
	if err == nil && op.Lease.Fence != "" {
		attrs = append(attrs, FenceKey.String(string(op.Lease.Fence)))
	}
	attrs = lookupAttrs(attrs, op)
	if op.HandedTo != "" {
		attrs = append(attrs, HandoffKey.Bool(true), HandoffFenceKey.String(string(op.HandedTo)))
	}
	return attrs
}

// namesKey reports whether an operation of kind k names a key, as opposed
// to a lease (by its lock id), so its span carries the key's hash even
// when the key is empty.
func namesKey(k lock.OpKind) bool {
	switch k {
	case lock.OpRelease, lock.OpExtend, lock.OpLookupID:
		return false
	}
	return true
}

// lookupAttrs appends, for a lookup, how it looked (syncguard.lookup.by
// key, id or limit) and what it found: the fence, and the key hash when it
// looked by id; the limit and the number of holders of a limit's slots.
func lookupAttrs(attrs []attribute.KeyValue, op *lock.Op) []attribute.KeyValue {
	switch op.Kind {
	case lock.OpLookupKey:
		attrs = append(attrs, LookupByKey.String("key"))
	case lock.OpLookupID:
		attrs = append(attrs, LookupByKey.String("id"))
	case lock.OpLookupLimit:
		attrs = append(attrs, LookupByKey.String("limit"))
	default:
		return attrs
	}
	if info := op.Info; info != nil {
		attrs = append(attrs, FenceKey.String(string(info.Fence)))
		if op.Kind == lock.OpLookupID && info.KeyHash != "" {
			attrs = append(attrs, KeyHashKey.String(info.KeyHash))
		}
	}
	if info := op.LimitInfo; info != nil {
		attrs = append(attrs, LimitKey.Int(info.Limit), HoldersKey.Int(len(info.Holders)))
	}
	return attrs
}

// acquired counts an acquire of the lock (or of a slot of limit n > 0)
// that ended with out: the start of lease l's held duration, or a
// contention.
func (h *Hook) acquired(ctx context.Context, l lock.Lease, n int, out outcome) {
	switch {
	case out == outAcquired:
		h.track(ctx, l)
	case out != outLocked:
	case n > 0:
		h.inst.contention.Add(ctx, 1, h.inst.limitSets(n).add...)
	default:
		h.inst.contention.Add(ctx, 1, h.inst.backendAdd...)
	}
}

// track starts the held-duration measurement of lease l, granted now.
func (h *Hook) track(ctx context.Context, l lock.Lease) {
	if h.inst.held.Enabled(ctx) {
		h.held.add(l, time.Now())
	}
}

// released ends the held duration of lease id after a release with
// outcome out: released or found not held, the lease is over; it is
// measured when it was granted through this hook and released.
func (h *Hook) released(ctx context.Context, id string, out outcome) {
	if out == outError || h.held.len() == 0 {
		return
	}
	if acquired, ok := h.held.remove(id); ok && out == outReleased {
		h.inst.held.Record(ctx, seconds(time.Since(acquired)), h.inst.backendRecord...)
	}
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
