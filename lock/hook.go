package lock

import (
	"context"
	"time"
)

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

// OpKind names an operation.
type OpKind uint8

// The operations of a Backend and its extensions, then the events of
// Acquire, Do, Hold and Keep around them.
const (
	// OpAcquire is Acquire, IDBackend.AcquireID and AcquireSlot (Limit >
	// 0), and Waiter.Attempt (Queued).
	OpAcquire OpKind = iota + 1
	// OpRelease is Release, and Recorder.ReleaseDone and ReleaseRecord
	// (Mark).
	OpRelease
	OpExtend
	OpExtendBatch
	OpIsLocked
	OpLookupKey
	OpLookupID
	OpLookupLimit
	OpIsDone
	OpRecord
	// OpWait is a whole acquisition by Acquire, Do or Hold, attempts and
	// waits included: next runs it, and the attempts' operations run under
	// the context next is given. Lease is set when it succeeds.
	OpWait
	// OpRetry is an attempt of an OpWait that did not get the lease:
	// Attempt, Err and Wait say which, why and how long until the next
	// one at most. next does nothing.
	OpRetry
	// OpGranted is a lease (Lease) a release handed to the waiter of an
	// OpWait, in the wait's context (Limit is the wait's). next does
	// nothing.
	OpGranted
	// OpLeaseLost is Keep losing Lease, in the context given to Keep; Err
	// matches ErrLeaseLost. next does nothing.
	OpLeaseLost
)

var opNames = [...]string{
	OpAcquire: "acquire", OpRelease: "release", OpExtend: "extend",
	OpExtendBatch: "extend_batch", OpIsLocked: "is_locked",
	OpLookupKey: "lookup_key", OpLookupID: "lookup_id",
	OpLookupLimit: "lookup_limit", OpIsDone: "is_done", OpRecord: "record",
	OpWait: "wait", OpRetry: "retry", OpGranted: "granted",
	OpLeaseLost: "lease_lost",
}

// String returns the operation's name, such as "acquire".
func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return "op(" + itoa(int(k)) + ")"
}

// Mark is what a release leaves behind (see [Recorder]).
type Mark uint8

const (
	// MarkNone is a plain Release.
	MarkNone Mark = iota
	// MarkDone is Recorder.ReleaseDone.
	MarkDone
	// MarkRecord is Recorder.ReleaseRecord.
	MarkRecord
)

// Op is one operation: its kind, its arguments, and, once next has
// returned, its results. Fields that do not apply to a kind are zero.
type Op struct {
	Kind OpKind

	// Key is the user key of an operation on a key (for a release with a
	// mark, Lease.Key).
	Key string
	// ID is the lock id of an operation on a lease, and of an acquisition
	// with a caller-chosen id.
	ID string
	// TTL is the lease's TTL (acquire, extend, wait), or the mark's (a
	// release with a mark).
	TTL time.Duration
	// Limit is the n of a slot acquisition or wait; 0 for the lock.
	Limit int
	// Queued is set on Waiter.Attempt: the attempt also takes or keeps the
	// caller's place in the key's queue.
	Queued bool
	// Mark is what a release leaves behind.
	Mark Mark
	// Requests are the leases of an extend_batch.
	Requests []ExtendRequest
	// Attempt counts the attempts of a wait, from 1 (retry).
	Attempt int
	// Wait is the longest delay before the next attempt (retry).
	Wait time.Duration

	// Lease is the lease granted (acquire, wait, granted), lost
	// (lease_lost), or released with a mark (an argument).
	Lease Lease
	// ExpiresAt is the new expiry (extend).
	ExpiresAt time.Time
	// Held reports that is_locked found the key held.
	Held bool
	// Done reports that is_done found a done marker.
	Done bool
	// Found reports that record found a record.
	Found bool
	// Record is the record stored (a release with MarkRecord) or found
	// (record).
	Record []byte
	// Info is what a lookup found; nil when nothing.
	Info *Info
	// LimitInfo is what lookup_limit found; nil when nothing.
	LimitInfo *LimitInfo
	// Results are extend_batch's, one per request.
	Results []ExtendResult
	// HandedTo is the fence of the lease a release handed to a waiter of
	// the key, when it did and the backend says so (see [HandedOver]).
	HandedTo Fence
	// Err is the failed attempt's error (retry) or the loss (lease_lost);
	// an operation's own error is what its OpFunc returns.
	Err error

	// body runs the operation when the Backend's methods do not (the
	// events, and an attempt of a waiter).
	body OpFunc
	// slot: an acquisition by AcquireSlot, whatever its Limit.
	slot bool
}

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
