package lock

import "time"

// OpKind names what an [Op] is: a Backend method (the acquisitions of
// IDBackend and Waiter are acquire), or, from OpWait on, an event of
// Acquire, Do, Hold, Keep or lock/election's Lead, which no backend runs.
type OpKind uint8

const (
	// OpAcquire is Acquire, IDBackend.AcquireID and AcquireSlot (Limit >
	// 0), and Waiter.Attempt (Queued).
	OpAcquire       OpKind = iota + 1
	OpRelease              // Release
	OpReleaseDone          // Recorder.ReleaseDone
	OpReleaseRecord        // Recorder.ReleaseRecord
	OpExtend               // Extend
	OpExtendBatch          // IDBackend.ExtendBatch, the heartbeat of Keep
	OpIsLocked             // IsLocked
	OpLookupKey            // LookupKey
	OpLookupID             // LookupID
	OpLookupLimit          // IDBackend.LookupLimit
	OpIsDone               // Recorder.IsDone
	OpRecord               // Recorder.Record
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
	// OpTerm is a term of lock/election's Lead, in the term's context:
	// next starts the term's heartbeat and runs the leader's function, so
	// a hook's start before next is the term's start, and the
	// heartbeat's calls run under the context the hook gives next. Lease
	// is the term's, Identity the candidate's.
	// next returns why the term ended: an error matching ErrLeaseLost
	// when it was lost, the cause of Lead's context when that ended, else
	// the function's error (nil: it resigned).
	OpTerm
)

var opNames = [...]string{
	OpAcquire: "acquire", OpRelease: "release", OpReleaseDone: "release_done",
	OpReleaseRecord: "release_record", OpExtend: "extend",
	OpExtendBatch: "extend_batch", OpIsLocked: "is_locked",
	OpLookupKey: "lookup_key", OpLookupID: "lookup_id",
	OpLookupLimit: "lookup_limit", OpIsDone: "is_done", OpRecord: "record",
	OpWait: "wait", OpRetry: "retry", OpGranted: "granted",
	OpLeaseLost: "lease_lost", OpTerm: "term",
}

// String returns the operation's name, such as "acquire".
func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return "op(" + itoa(int(k)) + ")"
}

// Op is one operation or event: its kind, its arguments (the first
// group of fields), and, once next has returned, its results (the second),
// or what an event reports (the third). Each field has one meaning, for
// the kinds named with it; the others leave it zero.
type Op struct {
	Kind OpKind

	// Key is the user key named: by an operation on a key, a wait and its
	// events, a term, and a release_done or release_record (the lease's
	// key).
	Key string
	// ID is the lock id named: by an operation on a lease, an acquisition
	// with a caller-chosen id (AcquireID, AcquireSlot, Waiter.Attempt), the
	// events of a wait that uses one, and lease_lost and term (the
	// lease's).
	ID string
	// TTL is the lease's duration asked for (acquire, extend, wait,
	// granted, lease_lost, term).
	TTL time.Duration
	// Limit is the n of a limit's slot asked for (acquire, wait, granted);
	// 0 for the lock.
	Limit int
	// Queued is set on Waiter.Attempt: the attempt also takes or keeps the
	// caller's place in the key's queue.
	Queued bool
	// MarkTTL is how long the done marker (release_done) or the record
	// (release_record) is kept.
	MarkTTL time.Duration
	// Leases are the leases an extend_batch extends, each by its TTL.
	Leases []Lease
	// Identity is the candidate's identity (term); hooks must not log it
	// raw.
	Identity string

	// Lease is the lease granted (acquire, wait, granted), lost
	// (lease_lost) or led under (term, with its fence).
	Lease Lease
	// ExpiresAt is the new expiry (extend).
	ExpiresAt time.Time
	// Held reports that is_locked found the key held.
	Held bool
	// Done reports that is_done found a done marker.
	Done bool
	// Found reports that record found a record.
	Found bool
	// Record is the record stored (release_record) or found (record).
	Record []byte
	// Info is what a lookup found; nil when nothing.
	Info *Info
	// LimitInfo is what lookup_limit found; nil when nothing.
	LimitInfo *LimitInfo
	// Results are extend_batch's, one per request.
	Results []ExtendResult
	// HandedTo is the fence of the lease a release handed to a waiter of
	// the key, when it did and the backend says so (lockdriver.HandedOver).
	HandedTo Fence

	// Attempt numbers the failed attempt of a wait, from 1 (retry).
	Attempt int
	// Wait is the longest delay before the next attempt; 0 when the wait
	// gives up (retry).
	Wait time.Duration
	// Err is why the attempt failed (retry) or the lease was lost
	// (lease_lost); an operation's own error is what its OpFunc returns.
	Err error

	// lease is the lease a release_done or release_record releases.
	lease Lease
	// body runs the operation when the Backend's methods do not (the
	// events, and an attempt of a waiter).
	body OpFunc
	// method is the Backend method an acquire calls: an Op's other fields
	// may not tell (an invalid argument, such as AcquireID's empty id or
	// AcquireSlot's n of 0, must still reach the method that rejects it).
	method method
}

// method tells apart the Backend methods of an acquire.
type method uint8

const (
	byAcquire     method = iota // Backend.Acquire
	byAcquireID                 // IDBackend.AcquireID
	byAcquireSlot               // IDBackend.AcquireSlot
)
