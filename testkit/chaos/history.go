package chaos

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Outcome is how a recorded call ended.
type Outcome int

// The outcomes of a call.
const (
	// OK: the call succeeded.
	OK Outcome = iota
	// NotHeld: Release or Extend found the lease gone (lock.ErrNotHeld).
	NotHeld
	// Busy: Acquire found the key locked (lock.ErrLocked).
	Busy
	// Ambiguous: the call failed (timeout, connection cut, server down):
	// the server may or may not have run it.
	Ambiguous
)

// Kind is the kind of a recorded call.
type Kind int

// The kinds of recorded calls.
const (
	Acquire Kind = iota
	Extend
	Release
	// Lookup is IsLocked, LookupKey, LookupID, LookupLimit, IsDone or
	// Record: it changes nothing, so only [CheckDeadlines] looks at it.
	Lookup
)

var kindNames = [...]string{"acquire", "extend", "release", "lookup"}

func (k Kind) String() string { return kindNames[k] }

// Op is one recorded backend call by a worker. Times are client wall-clock
// Unix nanoseconds.
type Op struct {
	Kind     Kind
	Key      string
	Fence    lock.Fence // the lease's fence (for Extend and Release); the granted fence for a successful Acquire; the fence found by a Lookup
	Worker   int
	CallNs   int64
	ReturnNs int64
	// FromNs, for a successful Acquire, is the earliest the server can
	// have made its grant: the first attempt with the lease's lock id (for
	// a queued waiter, the start of its wait), which may precede CallNs.
	// An attempt whose reply was lost, or a waiter's attempt that finds
	// the slot a release handed it before the attempt was sent, gets back
	// a grant made before the call that reports it.
	FromNs int64
	// DeadlineNs is the call's context deadline (0: none).
	DeadlineNs int64
	Outcome    Outcome
	// ExpiresMs is the lease expiry the server reported (server clock,
	// milliseconds) for a successful Acquire or Extend; 0 otherwise.
	ExpiresMs int64
}

// Grant is one lease granted by the server and returned to a worker.
type Grant struct {
	Key    string
	Fence  lock.Fence
	Worker int
	// Limit is the n of a slot of a concurrency limit (lock.WithLimit);
	// 0 for a lock.
	Limit int
	// Mode is "read" or "write" for a read-write lock (lock/rwlock); ""
	// else.
	Mode string
	// CallNs and ReturnNs bracket the acquisition that got it (client
	// clock): from the first attempt with its lock id (Op.FromNs) to the
	// return of the one that reported it.
	CallNs, ReturnNs int64
	// AcquiredMs is the server time of the grant (ExpiresAt - TTL).
	AcquiredMs int64
	// ExpiresMs is the latest expiry the server reported for it (grant or
	// a successful Extend), server clock. A failed Extend may have moved
	// the real expiry later, never earlier.
	ExpiresMs int64
	// ReleaseCallNs is when the first Release of it was sent (0: never).
	// The server cannot have freed it by release earlier than that.
	ReleaseCallNs int64
	// Released is true when a Release returned nil.
	Released bool
}

// EndMs is the earliest the server-side lease can have ended, server
// clock (milliseconds): its last known expiry, or the first release call
// if earlier.
func (g *Grant) EndMs() int64 {
	end := g.ExpiresMs
	if g.ReleaseCallNs > 0 {
		if r := g.ReleaseCallNs / 1e6; r < end {
			end = r
		}
	}
	return end
}

// DoCall is one lock.Do call by a worker, timed by the worker.
type DoCall struct {
	Worker int
	Key    string
	// CallNs and ReturnNs bracket the lock.Do call; DeadlineNs is its
	// context's deadline (0: none).
	CallNs, ReturnNs, DeadlineNs int64
	// FnReturnNs is when the function passed to Do returned (0: it never
	// ran, the acquisition failed).
	FnReturnNs int64
	// ReleaseTimeout is the WithReleaseTimeout given to Do: the release
	// after fn runs on a context of its own, bounded by it.
	ReleaseTimeout time.Duration
}

// History records every call the workers make through Backend.
type History struct {
	mu     sync.Mutex
	ops    []Op
	grants []*Grant
	byID   map[string]*Grant
	// tried is when the first attempt with each caller-chosen lock id was
	// made (or its waiter began to wait): a grant reported for that id
	// can have been made since then.
	tried map[string]int64
	errs  map[string]int // "op: code" -> count, for the report
	dos   []DoCall
	found []Violation // found while the run went on (see [History.Violation])
	// orphanReleases counts, by outcome, releases of lock ids no worker
	// was granted (lock.Acquire freeing an attempt whose reply was lost);
	// unknownIDs counts extends of such ids (none expected).
	orphanReleases map[string]int
	unknownIDs     int
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{byID: map[string]*Grant{}, tried: map[string]int64{}, errs: map[string]int{}, orphanReleases: map[string]int{}}
}

// Backend returns b with worker's calls recorded: lock.WithHooks(b,
// h.Hook(worker)), which has exactly b's extensions.
func (h *History) Backend(b lock.Backend, worker int) lock.Backend {
	return lock.WithHooks(b, h.Hook(worker))
}

// OrphanReleases returns the releases of lock ids no worker was granted,
// counted by outcome, and the number of extends of such ids.
func (h *History) OrphanReleases() (map[string]int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.orphanReleases))
	for k, v := range h.orphanReleases {
		out[k] = v
	}
	return out, h.unknownIDs
}

// Ops returns a copy of the recorded calls.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// Grants returns copies of the recorded grants, in record order.
func (h *History) Grants() []Grant {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Grant, len(h.grants))
	for i, g := range h.grants {
		out[i] = *g
	}
	return out
}

// RecordDo records a lock.Do call.
func (h *History) RecordDo(d DoCall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dos = append(h.dos, d)
}

// Dos returns a copy of the recorded lock.Do calls.
func (h *History) Dos() []DoCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]DoCall(nil), h.dos...)
}

// Violation records a violation seen while the run went on (one the
// history alone cannot show, such as a busy reply to the key's own lock
// id).
func (h *History) Violation(v Violation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.found = append(h.found, v)
}

// Found returns the violations recorded with [History.Violation].
func (h *History) Found() []Violation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Violation(nil), h.found...)
}

// Errors returns the failed calls counted by "op: code".
func (h *History) Errors() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.errs))
	for k, v := range h.errs {
		out[k] = v
	}
	return out
}

func outcome(err error) Outcome {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, lock.ErrNotHeld):
		return NotHeld
	case errors.Is(err, lock.ErrLocked):
		return Busy
	}
	return Ambiguous
}

func (h *History) record(op Op, err error) {
	if op.Outcome == Ambiguous {
		code := string(lock.CodeOf(err))
		if code == "" {
			code = "other"
		}
		h.errs[op.Kind.String()+": "+code]++
	}
	h.ops = append(h.ops, op)
}

// deadlineNs is ctx's deadline in Unix nanoseconds, 0 when it has none.
func deadlineNs(ctx context.Context) int64 {
	if d, ok := ctx.Deadline(); ok {
		return d.UnixNano()
	}
	return 0
}
