package otellock

// Operation names a kind of span the hook starts; a Filter decides by it
// (and the call's context) whether a call gets its span. For the Backend
// calls it is also the value of OperationKey on the metrics.
type Operation string

// The operations, one per span name: the span of Operation op is named
// "syncguard." + op.
const (
	// OperationAcquire is one attempt to take a lock or a slot: Acquire,
	// AcquireID, AcquireSlot and a queued waiter's Attempt; and a lease a
	// release handed over (with HandoffKey).
	OperationAcquire Operation = "acquire"
	// OperationRelease is Release, and ReleaseDone and ReleaseRecord of
	// a lock.Recorder.
	OperationRelease Operation = "release"
	// OperationExtend is Extend, a heartbeat of lock.Keep on a backend
	// that does not extend in batches.
	OperationExtend Operation = "extend"
	// OperationIsLocked is IsLocked.
	OperationIsLocked Operation = "is_locked"
	// OperationLookup is LookupKey, LookupID and LookupLimit.
	OperationLookup Operation = "lookup"
	// OperationIsDone is IsDone of a lock.Recorder: the done-marker check
	// of job deduplication (asynqlock).
	OperationIsDone Operation = "is_done"
	// OperationRecord is Record of a lock.Recorder: the read of a stored
	// response in replay mode (httplock, echolock).
	OperationRecord Operation = "record"
	// OperationWait is the whole acquisition by lock.Acquire, lock.Do or
	// lock.Hold, attempts and pauses included; its span is the parent of
	// the attempts' acquire spans.
	OperationWait Operation = "wait"
	// OperationExtendBatch is one ExtendBatch call of lock.Keep's
	// scheduler on a lock.IDBackend; its context is the scheduler's,
	// not a caller's.
	OperationExtendBatch Operation = "extend_batch"
)

// op indexes the operations, for precomputed names and attribute sets.
// The Backend calls come first: they alone are measured by
// syncguard.operation.duration.
type op uint8

const (
	opAcquire op = iota
	opRelease
	opExtend
	opIsLocked
	opLookup
	opIsDone
	opRecord
	opWait
	opExtendBatch
	numSpanOps
)

// numOps is the number of Backend operations, the ones with a
// syncguard.operation value.
const numOps = opWait

var operations = [numSpanOps]Operation{
	opAcquire:     OperationAcquire,
	opRelease:     OperationRelease,
	opExtend:      OperationExtend,
	opIsLocked:    OperationIsLocked,
	opLookup:      OperationLookup,
	opIsDone:      OperationIsDone,
	opRecord:      OperationRecord,
	opWait:        OperationWait,
	opExtendBatch: OperationExtendBatch,
}

// spanNames are the span names per op.
var spanNames = [numSpanOps]string{
	"syncguard.acquire", "syncguard.release", "syncguard.extend", "syncguard.is_locked",
	"syncguard.lookup", "syncguard.is_done", "syncguard.record", "syncguard.wait", "syncguard.extend_batch",
}
