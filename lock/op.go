package lock

import "time"

// OpKind names what an [Op] is: a Backend method, or from OpWait on an
// event, which no backend runs.
type OpKind uint8

// The kinds of Op. For the events, next does nothing unless said.
const (
	OpAcquire       OpKind = iota + 1 // Acquire, AcquireID, AcquireSlot, Waiter.Attempt, Recorder.AcquireDone and AcquireRecord
	OpRelease                         // Release
	OpReleaseDone                     // Recorder.ReleaseDone
	OpReleaseRecord                   // Recorder.ReleaseRecord
	OpExtend                          // Extend
	OpExtendBatch                     // IDBackend.ExtendBatch, Keep's batched heartbeat
	OpIsLocked                        // IsLocked
	OpLookupKey                       // LookupKey
	OpLookupID                        // LookupID
	OpLookupLimit                     // IDBackend.LookupLimit
	OpIsDone                          // Recorder.IsDone
	OpRecord                          // Recorder.Record
	// OpWait is a whole acquisition, attempts and waits included: next
	// runs it, and the attempts run under the context next is given.
	OpWait
	// OpRetry is a failed attempt of a wait: Attempt, Err and Wait.
	OpRetry
	// OpGranted is a lease a release handed to a wait's waiter.
	OpGranted
	// OpLeaseLost is Keep losing Lease; Err matches ErrLeaseLost.
	OpLeaseLost
	// OpTerm is a term of lock/election's Lead: next starts its heartbeat
	// and runs the leader's function under the context it is given, and
	// returns why the term ended: the loss, the cause of Lead's context,
	// or the function's error.
	OpTerm
	// OpAcquireMulti is one attempt of lock/multilock to take several
	// keys at once, all or none: Keys, IDs, TTL, then Leases granted.
	OpAcquireMulti
	// OpReleaseMulti is lock/multilock's release of Leases together,
	// with each one's Results.
	OpReleaseMulti
)

var opNames = [...]string{
	OpAcquire: "acquire", OpRelease: "release", OpReleaseDone: "release_done",
	OpReleaseRecord: "release_record", OpExtend: "extend",
	OpExtendBatch: "extend_batch", OpIsLocked: "is_locked",
	OpLookupKey: "lookup_key", OpLookupID: "lookup_id",
	OpLookupLimit: "lookup_limit", OpIsDone: "is_done", OpRecord: "record",
	OpWait: "wait", OpRetry: "retry", OpGranted: "granted",
	OpLeaseLost: "lease_lost", OpTerm: "term",
	OpAcquireMulti: "acquire_multi", OpReleaseMulti: "release_multi",
}

// String returns the operation's name, such as "acquire".
func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return "op(" + itoa(int(k)) + ")"
}

// Op is one operation or event: its kind, its arguments, then its
// results once next has returned, then what an event reports. A field is
// zero for the kinds it does not name.
type Op struct {
	Kind     OpKind
	Key      string        // the user key named by the operation or event
	ID       string        // the lock id named, when there is one
	TTL      time.Duration // the lease duration asked for
	Limit    int           // the n of a slot asked for; 0 for the lock
	Queued   bool          // Waiter.Attempt: it keeps a place in the queue
	MarkTTL  time.Duration // how long a done marker or record is kept
	Leases   []Lease       // extend_batch's and release_multi's leases; acquire_multi's grants
	Keys     []string      // acquire_multi's keys
	IDs      []string      // acquire_multi's lock ids, one per key
	Identity string        // term: the candidate's; do not log it raw
	Mode     string        // a read-write lock's "read" or "write" (lock/rwlock); "" else

	Lease     Lease          // granted (acquire, wait, granted), lost, or led under (term)
	ExpiresAt time.Time      // extend's new expiry
	Held      bool           // is_locked found the key held
	Done      bool           // is_done, or acquire by AcquireDone, found a done marker
	Found     bool           // record, or acquire by AcquireRecord, found a record
	Record    []byte         // the record stored or found
	Info      *Info          // what a lookup found; nil when nothing
	LimitInfo *LimitInfo     // what lookup_limit found; nil when nothing
	Results   []ExtendResult // extend_batch's and release_multi's (Err only), one per lease
	HandedTo  Fence          // a release's hand-off to a waiter (lockdriver.HandedOver)

	Attempt int           // retry: the failed attempt's number, from 1
	Wait    time.Duration // retry: the longest delay before the next; 0 when giving up
	Err     error         // retry: why it failed; lease_lost: why

	lease  Lease  // the lease a release_done or release_record releases
	body   OpFunc // runs the operation when no Backend method does
	method method // the Backend method an acquire calls
}

// method tells apart the Backend methods of an acquire.
type method uint8

const (
	byAcquire       method = iota // Backend.Acquire
	byAcquireID                   // IDBackend.AcquireID
	byAcquireSlot                 // IDBackend.AcquireSlot
	byAcquireDone                 // Recorder.AcquireDone
	byAcquireRecord               // Recorder.AcquireRecord
)
