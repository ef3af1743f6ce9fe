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
)

var kindNames = [...]string{"acquire", "extend", "release"}

func (k Kind) String() string { return kindNames[k] }

// Op is one recorded backend call by a worker. Times are client wall-clock
// Unix nanoseconds.
type Op struct {
	Kind     Kind
	Key      string
	Fence    lock.Fence // the lease's fence (for Extend and Release); the granted fence for a successful Acquire
	Worker   int
	CallNs   int64
	ReturnNs int64
	Outcome  Outcome
}

// Grant is one lease granted by the server and returned to a worker.
type Grant struct {
	Key    string
	Fence  lock.Fence
	Worker int
	// CallNs and ReturnNs bracket the Acquire call that got it (client clock).
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

// History records every call the workers make through Backend.
type History struct {
	mu     sync.Mutex
	ops    []Op
	grants []*Grant
	byID   map[string]*Grant
	errs   map[string]int // "op: code" -> count, for the report
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{byID: map[string]*Grant{}, errs: map[string]int{}}
}

// Backend returns b wrapped so that worker's calls are recorded.
func (h *History) Backend(b lock.Backend, worker int) lock.Backend {
	return &recorder{Backend: b, h: h, worker: worker}
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

// recorder is a lock.Backend that records the calls of one worker.
type recorder struct {
	lock.Backend
	h      *History
	worker int
}

func (r *recorder) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	call := time.Now().UnixNano()
	l, err := r.Backend.Acquire(ctx, key, ttl)
	ret := time.Now().UnixNano()
	op := Op{Kind: Acquire, Key: key, Worker: r.worker, CallNs: call, ReturnNs: ret, Outcome: outcome(err)}
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	if err == nil {
		op.Fence = l.Fence
		g := &Grant{
			Key: l.Key, Fence: l.Fence, Worker: r.worker, CallNs: call, ReturnNs: ret,
			AcquiredMs: l.ExpiresAt.Add(-l.TTL).UnixMilli(), ExpiresMs: l.ExpiresAt.UnixMilli(),
		}
		r.h.grants = append(r.h.grants, g)
		r.h.byID[l.ID] = g
	}
	r.h.record(op, err)
	return l, err
}

func (r *recorder) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	call := time.Now().UnixNano()
	exp, err := r.Backend.Extend(ctx, id, ttl)
	ret := time.Now().UnixNano()
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	g := r.h.byID[id]
	op := Op{Kind: Extend, Key: g.Key, Fence: g.Fence, Worker: r.worker, CallNs: call, ReturnNs: ret, Outcome: outcome(err)}
	if err == nil && exp.UnixMilli() > g.ExpiresMs {
		g.ExpiresMs = exp.UnixMilli()
	}
	r.h.record(op, err)
	return exp, err
}

func (r *recorder) Release(ctx context.Context, id string) error {
	call := time.Now().UnixNano()
	err := r.Backend.Release(ctx, id)
	ret := time.Now().UnixNano()
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	g := r.h.byID[id]
	op := Op{Kind: Release, Key: g.Key, Fence: g.Fence, Worker: r.worker, CallNs: call, ReturnNs: ret, Outcome: outcome(err)}
	if g.ReleaseCallNs == 0 {
		g.ReleaseCallNs = call
	}
	if err == nil {
		g.Released = true
	}
	r.h.record(op, err)
	return err
}
