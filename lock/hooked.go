package lock

import (
	"context"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// hooked is a Backend with hooks, from WithHooks. Its extensions' methods live
// in idOps and recOps, so each of the four result types has exactly the
// methods of the backend it wraps.
type hooked struct {
	b   Backend
	id  IDBackend // b as an IDBackend, or nil
	rec Recorder  // b as a Recorder, or nil
	run OpFunc    // the chain: the hooks, then terminal
}

type hookedID struct {
	*hooked
	idOps
}

type hookedRec struct {
	*hooked
	recOps
}

type hookedAll struct {
	*hooked
	idOps
	recOps
}

func (h *hooked) chain() *hooked { return h }

// Locals returns the Locals of the backend the hooks wrap, or nil.
func (h *hooked) Locals() *Locals { return localsOf(h.b) }

// Unwrap returns the backend the hooks wrap.
func (h *hooked) Unwrap() Backend { return h.b }

// terminal runs op on the wrapped backend (or its body), the end of the
// chain.
func (h *hooked) terminal(ctx context.Context, op *Op) error {
	switch op.Kind {
	case OpWait, OpRetry, OpGranted, OpLeaseLost, OpTerm:
		// Events go on to the hooks of a wrapped backend that has some.
		if hc, ok := h.b.(hookChain); ok {
			return hc.chain().run(ctx, op)
		}
	case OpRelease, OpReleaseDone, OpReleaseRecord:
		return h.release(ctx, op)
	}
	if op.body != nil {
		return op.body(ctx, op)
	}
	return h.call(ctx, op)
}

// call runs the operation op names on the wrapped backend; it does
// nothing for an event.
func (h *hooked) call(ctx context.Context, op *Op) (err error) {
	switch op.Kind {
	case OpAcquire:
		switch op.method {
		case byAcquireID:
			op.Lease, err = h.id.AcquireID(ctx, op.Key, op.ID, op.TTL)
		case byAcquireSlot:
			op.Lease, err = h.id.AcquireSlot(ctx, op.Key, op.ID, op.Limit, op.TTL)
		case byAcquireDone:
			op.Lease, op.Done, err = h.rec.AcquireDone(ctx, op.Key, op.TTL)
		case byAcquireRecord:
			op.Lease, op.Record, err = h.rec.AcquireRecord(ctx, op.Key, op.TTL)
			op.Found = op.Record != nil
		default:
			op.Lease, err = h.b.Acquire(ctx, op.Key, op.TTL)
		}
	case OpExtend:
		op.ExpiresAt, err = h.b.Extend(ctx, op.ID, op.TTL)
	case OpExtendBatch:
		op.Results = h.id.ExtendBatch(ctx, op.Leases)
	case OpIsLocked:
		op.Held, err = h.b.IsLocked(ctx, op.Key)
	case OpLookupKey:
		op.Info, err = h.b.LookupKey(ctx, op.Key)
	case OpLookupID:
		op.Info, err = h.b.LookupID(ctx, op.ID)
	case OpLookupLimit:
		op.LimitInfo, err = h.id.LookupLimit(ctx, op.Key)
	case OpIsDone:
		op.Done, err = h.rec.IsDone(ctx, op.Key)
	case OpRecord:
		op.Record, op.Found, err = h.rec.Record(ctx, op.Key)
	}
	return err
}

// release runs the release op names, under a context in which the backend
// can report a hand-off with lockdriver.HandedOver into op.HandedTo.
func (h *hooked) release(ctx context.Context, op *Op) error {
	if ctx != nil { // a nil one is the backend's to reject
		var ho *contract.Handoff
		ctx, ho = contract.WithHandoff(ctx)
		defer func() { op.HandedTo = Fence(ho.To) }()
	}
	switch op.Kind {
	case OpReleaseDone:
		return h.rec.ReleaseDone(ctx, op.lease, op.MarkTTL)
	case OpReleaseRecord:
		return h.rec.ReleaseRecord(ctx, op.lease, op.Record, op.MarkTTL)
	}
	return h.b.Release(ctx, op.ID)
}

// Acquire runs Backend.Acquire through the hooks.
func (h *hooked) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	op := getOp(Op{Kind: OpAcquire, Key: key, TTL: ttl})
	defer putOp(op)
	err := h.run(ctx, op)
	return op.Lease, err
}

// Release runs Backend.Release through the hooks.
func (h *hooked) Release(ctx context.Context, id string) error {
	op := getOp(Op{Kind: OpRelease, ID: id})
	defer putOp(op)
	return h.run(ctx, op)
}

// Extend runs Backend.Extend through the hooks.
func (h *hooked) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	op := getOp(Op{Kind: OpExtend, ID: id, TTL: ttl})
	defer putOp(op)
	err := h.run(ctx, op)
	return op.ExpiresAt, err
}

// IsLocked runs Backend.IsLocked through the hooks.
func (h *hooked) IsLocked(ctx context.Context, key string) (bool, error) {
	op := getOp(Op{Kind: OpIsLocked, Key: key})
	defer putOp(op)
	err := h.run(ctx, op)
	return op.Held, err
}

// LookupKey runs Backend.LookupKey through the hooks.
func (h *hooked) LookupKey(ctx context.Context, key string) (*Info, error) {
	op := getOp(Op{Kind: OpLookupKey, Key: key})
	defer putOp(op)
	err := h.run(ctx, op)
	return op.Info, err
}

// LookupID runs Backend.LookupID through the hooks.
func (h *hooked) LookupID(ctx context.Context, id string) (*Info, error) {
	op := getOp(Op{Kind: OpLookupID, ID: id})
	defer putOp(op)
	err := h.run(ctx, op)
	return op.Info, err
}

// Capabilities returns the wrapped backend's.
func (h *hooked) Capabilities() Capabilities { return h.b.Capabilities() }

// idOps are the IDBackend methods of a hooked backend.
type idOps struct{ h *hooked }

// NewLockID returns the wrapped backend's (it does no I/O: not an
// operation).
func (o idOps) NewLockID(key string) (string, error) { return o.h.id.NewLockID(key) }

// AcquireID runs IDBackend.AcquireID through the hooks.
func (o idOps) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (Lease, error) {
	op := getOp(Op{Kind: OpAcquire, Key: key, ID: id, TTL: ttl, method: byAcquireID})
	defer putOp(op)
	err := o.h.run(ctx, op)
	return op.Lease, err
}

// AcquireSlot runs IDBackend.AcquireSlot through the hooks.
func (o idOps) AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (Lease, error) {
	op := getOp(Op{Kind: OpAcquire, Key: key, ID: id, Limit: n, TTL: ttl, method: byAcquireSlot})
	defer putOp(op)
	err := o.h.run(ctx, op)
	return op.Lease, err
}

// LookupLimit runs IDBackend.LookupLimit through the hooks.
func (o idOps) LookupLimit(ctx context.Context, key string) (*LimitInfo, error) {
	op := getOp(Op{Kind: OpLookupLimit, Key: key})
	defer putOp(op)
	err := o.h.run(ctx, op)
	return op.LimitInfo, err
}

// ExtendBatch runs IDBackend.ExtendBatch through the hooks.
func (o idOps) ExtendBatch(ctx context.Context, reqs []Lease) []ExtendResult {
	op := getOp(Op{Kind: OpExtendBatch, Leases: reqs})
	defer putOp(op)
	if err := o.h.run(ctx, op); err != nil && len(op.Results) != len(reqs) {
		// A hook failed the batch: every lease gets its error.
		op.Results = make([]ExtendResult, len(reqs))
		for i := range op.Results {
			op.Results[i].Err = err
		}
	}
	return op.Results
}

// Join returns the wrapped backend's waiter, whose attempts run through
// the hooks.
func (o idOps) Join(key, id string, n int, ttl, wait time.Duration) (Waiter, error) {
	w, err := o.h.id.Join(key, id, n, ttl, wait)
	if err != nil {
		return nil, err
	}
	return &hookedWaiter{Waiter: w, h: o.h, key: key, id: id, n: n, ttl: ttl}, nil
}

// hookedWaiter is a Waiter whose attempts run through the hooks.
type hookedWaiter struct {
	Waiter
	h       *hooked
	key, id string
	n       int
	ttl     time.Duration
}

// Attempt runs Waiter.Attempt through the hooks.
func (w *hookedWaiter) Attempt(ctx context.Context) (Lease, error) {
	op := getOp(Op{Kind: OpAcquire, Key: w.key, ID: w.id, Limit: w.n, TTL: w.ttl, Queued: true,
		body: func(ctx context.Context, op *Op) (err error) {
			op.Lease, err = w.Waiter.Attempt(ctx)
			return err
		}})
	defer putOp(op)
	err := w.h.run(ctx, op)
	return op.Lease, err
}

// LeaveWait passes the call on to the wrapped Waiter's LeaveWait (see
// Waiter), or calls its Leave(false) when it has none.
func (w *hookedWaiter) LeaveWait(ctx context.Context) error {
	if lw, ok := w.Waiter.(interface{ LeaveWait(context.Context) error }); ok {
		return lw.LeaveWait(ctx)
	}
	w.Waiter.Leave(false)
	return nil
}

// recOps are the Recorder methods of a hooked backend.
type recOps struct{ h *hooked }

// ReleaseDone runs Recorder.ReleaseDone through the hooks.
func (o recOps) ReleaseDone(ctx context.Context, l Lease, doneTTL time.Duration) error {
	op := getOp(Op{Kind: OpReleaseDone, Key: l.Key, ID: l.ID, MarkTTL: doneTTL, lease: l})
	defer putOp(op)
	return o.h.run(ctx, op)
}

// IsDone runs Recorder.IsDone through the hooks.
func (o recOps) IsDone(ctx context.Context, key string) (bool, error) {
	op := getOp(Op{Kind: OpIsDone, Key: key})
	defer putOp(op)
	err := o.h.run(ctx, op)
	return op.Done, err
}

// AcquireDone runs Recorder.AcquireDone through the hooks, as an acquire.
func (o recOps) AcquireDone(ctx context.Context, key string, ttl time.Duration) (Lease, bool, error) {
	op := getOp(Op{Kind: OpAcquire, Key: key, TTL: ttl, method: byAcquireDone})
	defer putOp(op)
	err := o.h.run(ctx, op)
	return op.Lease, op.Done, err
}

// AcquireRecord runs Recorder.AcquireRecord through the hooks, as an
// acquire.
func (o recOps) AcquireRecord(ctx context.Context, key string, ttl time.Duration) (Lease, []byte, error) {
	op := getOp(Op{Kind: OpAcquire, Key: key, TTL: ttl, method: byAcquireRecord})
	defer putOp(op)
	err := o.h.run(ctx, op)
	return op.Lease, op.Record, err
}

// ReleaseRecord runs Recorder.ReleaseRecord through the hooks.
func (o recOps) ReleaseRecord(ctx context.Context, l Lease, record []byte, ttl time.Duration) error {
	op := getOp(Op{Kind: OpReleaseRecord, Key: l.Key, ID: l.ID, Record: record, MarkTTL: ttl, lease: l})
	defer putOp(op)
	return o.h.run(ctx, op)
}

// Record runs Recorder.Record through the hooks.
func (o recOps) Record(ctx context.Context, key string) ([]byte, bool, error) {
	op := getOp(Op{Kind: OpRecord, Key: key})
	defer putOp(op)
	err := o.h.run(ctx, op)
	return op.Record, op.Found, err
}

// opPool recycles the Ops of hooked calls: a hook must not keep op once
// its OpFunc has returned (see Hook).
var opPool = sync.Pool{New: func() any { return new(Op) }}

// getOp returns a pooled Op set to v.
func getOp(v Op) *Op {
	op := opPool.Get().(*Op)
	*op = v
	return op
}

// putOp clears op and returns it to the pool.
func putOp(op *Op) {
	*op = Op{}
	opPool.Put(op)
}
