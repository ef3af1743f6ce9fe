package otellock

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Attribute keys on spans, span events and metrics.
const (
	// KeyHashKey is lockdriver.HashKey of the lock key (spans, and the
	// term metrics).
	KeyHashKey = attribute.Key("syncguard.key.hash")
	// KeyKey is the raw lock key, only with WithRawKeys (spans).
	KeyKey = attribute.Key("syncguard.key")
	// LockIDHashKey is lockdriver.HashKey of the lock id (spans).
	LockIDHashKey = attribute.Key("syncguard.lock_id.hash")
	// TTLKey is the lease duration asked for, in seconds (spans).
	TTLKey = attribute.Key("syncguard.ttl")
	// FenceKey is the lease's fencing token, 15 decimal digits (spans).
	FenceKey = attribute.Key("syncguard.fence")
	// IdentityHashKey is IdentityHash of the identity a term's leader
	// campaigned as; the raw identity is never recorded (term spans).
	IdentityHashKey = attribute.Key("syncguard.identity.hash")
	// OutcomeKey is what an operation, a wait or a term came to (spans,
	// events, metrics); see the Outcome constants.
	OutcomeKey = attribute.Key("syncguard.outcome")
	// OperationKey names the Backend method by its lock.OpKind: acquire,
	// release, extend, is_locked, lookup_key, ... (metrics).
	OperationKey = attribute.Key("syncguard.operation")
	// BackendKey is Capabilities().Backend of the wrapped backend, such as
	// "redis" (spans, metrics).
	BackendKey = attribute.Key("syncguard.backend")
	// LookupByKey is "key" or "id": which lookup ran (lookup spans).
	LookupByKey = attribute.Key("syncguard.lookup.by")
	// AttemptKey numbers an attempt of a wait from 1 (attempt events).
	AttemptKey = attribute.Key("syncguard.attempt")
	// AttemptsKey counts the attempts of a wait (wait spans).
	AttemptsKey = attribute.Key("syncguard.attempts")
	// NextWaitKey is the delay before the next attempt, in seconds, 0 when
	// the wait gives up (attempt events).
	NextWaitKey = attribute.Key("syncguard.wait.next")
	// WaitKey is the whole wait, in seconds (wait spans).
	WaitKey = attribute.Key("syncguard.wait.duration")
	// ReasonKey says why a lease was lost, as the error's text, which
	// never contains a key or lock id (lease_lost events).
	ReasonKey = attribute.Key("syncguard.reason")
	// ModeKey is "read" or "write": how a read-write lock (lock/rwlock)
	// is held (its acquire, wait, release and extend spans).
	ModeKey = attribute.Key("syncguard.lock.mode")
	// ErrorTypeKey is the semantic-convention error.type: the lock.Code of
	// a system failure, or the Go type of a foreign error (spans, events,
	// metrics).
	ErrorTypeKey = attribute.Key("error.type")
)

// Outcome values of OutcomeKey.
const (
	OutcomeAcquired = "acquired"  // acquire, wait: the lease was granted
	OutcomeLocked   = "locked"    // acquire, attempt: another lease holds the key
	OutcomeTimeout  = "timeout"   // wait: gave up on a busy key (lock.CodeAcquisitionTimeout)
	OutcomeReleased = "released"  // release
	OutcomeExtended = "extended"  // extend
	OutcomeNotHeld  = "not_held"  // release, extend: lock.ErrNotHeld without a known reason
	OutcomeNotFound = "not_found" // release, extend: lockdriver.NotHeldNotFound; lookup: no live lease; is_done, record: none stored
	OutcomeExpired  = "expired"   // release, extend: lockdriver.NotHeldExpired
	OutcomeNotOwner = "not_owner" // release, extend: lockdriver.NotHeldNotOwner
	OutcomeHeld     = "held"      // is_locked: true
	OutcomeFree     = "free"      // is_locked: false
	OutcomeFound    = "found"     // lookup: a live lease; is_done: a live done marker; record: a stored record; acquire: the key's done marker or record, nothing taken (Recorder.AcquireDone, AcquireRecord)
	OutcomeError    = "error"     // any: a system failure; see error.type; term: the leader's function failed
	OutcomeResigned = "resigned"  // term: the leader's function returned nil
	OutcomeLost     = "lost"      // term: the lease was lost
	OutcomeStopped  = "stopped"   // term: Lead's context ended
	OutcomePanicked = "panicked"  // term: the leader's function panicked
)

// outcome indexes the Outcome constants, for precomputed attribute sets.
type outcome uint8

const (
	outAcquired outcome = iota
	outLocked
	outTimeout
	outReleased
	outExtended
	outNotHeld
	outNotFound
	outExpired
	outNotOwner
	outHeld
	outFree
	outFound
	outError
	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	outAcquired: OutcomeAcquired,
	outLocked:   OutcomeLocked,
	outTimeout:  OutcomeTimeout,
	outReleased: OutcomeReleased,
	outExtended: OutcomeExtended,
	outNotHeld:  OutcomeNotHeld,
	outNotFound: OutcomeNotFound,
	outExpired:  OutcomeExpired,
	outNotOwner: OutcomeNotOwner,
	outHeld:     OutcomeHeld,
	outFree:     OutcomeFree,
	outFound:    OutcomeFound,
	outError:    OutcomeError,
}

// String returns the outcome's attribute value.
func (o outcome) String() string { return outcomeNames[o] }

// Event names.
const (
	attemptEvent   = "attempt"
	leaseLostEvent = "syncguard.lease_lost"
)

// classify maps a failed call's error to its outcome. Contention and a
// lease that is not held are outcomes; everything else is an error.
func classify(err error) outcome {
	var nh *lockdriver.NotHeldError
	switch {
	case errors.As(err, &nh):
		switch nh.Reason {
		case lockdriver.NotHeldNotFound:
			return outNotFound
		case lockdriver.NotHeldExpired:
			return outExpired
		case lockdriver.NotHeldNotOwner:
			return outNotOwner
		}
		return outNotHeld
	case errors.Is(err, lock.ErrNotHeld):
		return outNotHeld
	case lock.CodeOf(err) == lock.CodeAcquisitionTimeout:
		return outTimeout
	case lock.CodeOf(err) == "" && errors.Is(err, lock.ErrLocked):
		return outLocked
	}
	return outError
}

// errorType is the error.type of a system failure: its lock.Code, else
// the Go type of the error.
func errorType(err error) string {
	if c := lock.CodeOf(err); c != "" {
		return string(c)
	}
	return fmt.Sprintf("%T", err)
}

// seconds converts d for attributes and histograms, which use seconds.
func seconds(d time.Duration) float64 { return d.Seconds() }

// keyAttrs appends the attributes that identify key: its hash, and the raw
// key too when raw is set (and the key is valid UTF-8, as attribute values
// must be).
func keyAttrs(attrs []attribute.KeyValue, key string, raw bool) []attribute.KeyValue {
	attrs = append(attrs, KeyHashKey.String(lockdriver.HashKey(key)))
	if raw && utf8.ValidString(key) {
		attrs = append(attrs, KeyKey.String(key))
	}
	return attrs
}
