package chaos

import (
	"context"
	"errors"
	"fmt"
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

// Backend returns b wrapped so that worker's calls are recorded.
func (h *History) Backend(b lock.Backend, worker int) lock.Backend {
	return h.recorder(b, worker)
}

func (h *History) recorder(b lock.Backend, worker int) *recorder {
	return &recorder{Backend: b, h: h, worker: worker}
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

// recorder is a lock.Backend that records the calls of one worker. Each
// call is recorded once, whatever the client did underneath (go-redis
// re-sends a command whose reply was lost, up to MaxRetries times): its
// outcome is the one the caller saw, and a failed call is Ambiguous (it
// may have run on the server, once or more).
//
// It has the optional interfaces lock uses when a backend has them, so the
// workers take the paths users take: [lock.BatchExtender] (batched keep-alive; each lease of a batch
// is recorded as an Extend) and lock.IDAcquirer (one lock id for every
// attempt of an Acquire; declared here as [idAcquirer] so that the harness
// builds whether or not lock has it). Each forwards to the wrapped backend,
// or says it is unsupported the way lock expects.
type recorder struct {
	lock.Backend
	h      *History
	worker int
}

// idAcquirer is lock.IDAcquirer's method set.
type idAcquirer interface {
	NewLockID(key string) (string, error)
	AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error)
}

var (
	_ lock.BatchExtender = (*recorder)(nil)
	_ idAcquirer         = (*recorder)(nil)
)

func (r *recorder) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	return r.acquire(ctx, key, 0, func() (lock.Lease, error) { return r.Backend.Acquire(ctx, key, ttl) })
}

// NewLockID forwards to the backend's lock.IDAcquirer or lock.Limiter.
func (r *recorder) NewLockID(key string) (string, error) {
	if a, ok := r.Backend.(interface{ NewLockID(string) (string, error) }); ok {
		return a.NewLockID(key)
	}
	return "", fmt.Errorf("chaos: backend takes no caller-chosen lock ids: %w", errors.ErrUnsupported)
}

// AcquireID forwards to the backend's lock.IDAcquirer and is recorded as
// an Acquire.
func (r *recorder) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error) {
	a, ok := r.Backend.(idAcquirer)
	if !ok {
		return lock.Lease{}, fmt.Errorf("chaos: backend takes no caller-chosen lock ids: %w", errors.ErrUnsupported)
	}
	return r.acquireID(ctx, key, id, 0, func() (lock.Lease, error) { return a.AcquireID(ctx, key, id, ttl) })
}

// acquire records run, an acquisition of key: of the lock, or of a slot
// of a limit of n when n > 0.
func (r *recorder) acquire(ctx context.Context, key string, n int, run func() (lock.Lease, error)) (lock.Lease, error) {
	return r.acquireID(ctx, key, "", n, run)
}

// acquireID is acquire of an attempt with lock id id ("": the backend
// picks it, so no other attempt shares it).
func (r *recorder) acquireID(ctx context.Context, key, id string, n int, run func() (lock.Lease, error)) (lock.Lease, error) {
	call := time.Now().UnixNano()
	r.h.try(id, call)
	l, err := run()
	return r.record(call, key, n, deadlineNs(ctx), l, err)
}

// try notes that an attempt with lock id id ("": none chosen) was made
// at call, for the grants later reported for it.
func (h *History) try(id string, call int64) {
	if id == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.tried[id]; !ok || call < t {
		h.tried[id] = call
	}
}

// acquireAt records a lease handed over to a waiter that began waiting at
// call as an Acquire that returned now.
func (r *recorder) acquireAt(call int64, key string, n int, l lock.Lease) (lock.Lease, error) {
	return r.record(call, key, n, 0, l, nil)
}

// record records an Acquire (of a slot of n, when n > 0) called at call
// that returned now with l, err.
func (r *recorder) record(call int64, key string, n int, deadline int64, l lock.Lease, err error) (lock.Lease, error) {
	ret := time.Now().UnixNano()
	op := Op{Kind: Acquire, Key: key, Worker: r.worker, CallNs: call, ReturnNs: ret, DeadlineNs: deadline, Outcome: outcome(err)}
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	if err == nil {
		op.Fence = l.Fence
		op.ExpiresMs = l.ExpiresAt.UnixMilli()
		op.FromNs = call
		if t, ok := r.h.tried[l.ID]; ok && t < call {
			op.FromNs = t
		}
		if g := r.h.byID[l.ID]; g != nil {
			// The same lease again (an acquire that got its own grant
			// back): one grant.
			g.ExpiresMs = max(g.ExpiresMs, op.ExpiresMs)
		} else {
			g := &Grant{
				Key: l.Key, Fence: l.Fence, Worker: r.worker, Limit: n, CallNs: op.FromNs, ReturnNs: ret,
				AcquiredMs: l.ExpiresAt.Add(-l.TTL).UnixMilli(), ExpiresMs: l.ExpiresAt.UnixMilli(),
			}
			r.h.grants = append(r.h.grants, g)
			r.h.byID[l.ID] = g
		}
	}
	r.h.record(op, err)
	return l, err
}

func (r *recorder) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	call := time.Now().UnixNano()
	exp, err := r.Backend.Extend(ctx, id, ttl)
	r.recordExtend(ctx, id, call, time.Now().UnixNano(), exp, err)
	return exp, err
}

// ExtendBatch forwards to the backend's lock.BatchExtender (none: one
// Extend per lease), and records each lease's extension as an Extend
// spanning the whole batch.
func (r *recorder) ExtendBatch(ctx context.Context, reqs []lock.ExtendRequest) []lock.ExtendResult {
	call := time.Now().UnixNano()
	var res []lock.ExtendResult
	if be, ok := r.Backend.(lock.BatchExtender); ok {
		res = be.ExtendBatch(ctx, reqs)
	} else {
		res = make([]lock.ExtendResult, len(reqs))
		for i, q := range reqs {
			res[i].ExpiresAt, res[i].Err = r.Backend.Extend(ctx, q.ID, q.TTL)
		}
	}
	ret := time.Now().UnixNano()
	for i, q := range reqs {
		rs := lock.ExtendResult{Err: errors.New("chaos: no result for this lease in the batch")}
		if i < len(res) {
			rs = res[i]
		}
		r.recordExtend(ctx, q.ID, call, ret, rs.ExpiresAt, rs.Err)
	}
	return res
}

func (r *recorder) recordExtend(ctx context.Context, id string, call, ret int64, exp time.Time, err error) {
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	g := r.h.byID[id]
	if g == nil {
		r.h.unknownIDs++
		return
	}
	op := Op{Kind: Extend, Key: g.Key, Fence: g.Fence, Worker: r.worker, CallNs: call, ReturnNs: ret, DeadlineNs: deadlineNs(ctx), Outcome: outcome(err)}
	if err == nil {
		op.ExpiresMs = exp.UnixMilli()
		if op.ExpiresMs > g.ExpiresMs {
			g.ExpiresMs = op.ExpiresMs
		}
	}
	r.h.record(op, err)
}

func (r *recorder) Release(ctx context.Context, id string) error {
	call := time.Now().UnixNano()
	err := r.Backend.Release(ctx, id)
	ret := time.Now().UnixNano()
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	g := r.h.byID[id]
	if g == nil {
		// The id of an acquire whose outcome its caller never learned
		// (lock.Acquire frees it when it gives up): it may free a lease
		// no worker knew of, which no check relies on.
		r.h.orphanReleases[[...]string{"ok", "not held", "busy", "failed"}[outcome(err)]]++
		return err
	}
	op := Op{Kind: Release, Key: g.Key, Fence: g.Fence, Worker: r.worker, CallNs: call, ReturnNs: ret, DeadlineNs: deadlineNs(ctx), Outcome: outcome(err)}
	if g.ReleaseCallNs == 0 {
		g.ReleaseCallNs = call
	}
	if err == nil {
		g.Released = true
	}
	r.h.record(op, err)
	return err
}
