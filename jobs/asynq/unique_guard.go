package asynqlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// uniqueHeader is what uniqueHeaderName carries: the unique key and the
// producer's lease and backstop.
type uniqueHeader struct {
	key             string
	lease, backstop time.Duration
}

// String is the header's value: "<lease ms> <backstop ms> <key>".
func (h uniqueHeader) String() string {
	return strconv.FormatInt(h.lease.Milliseconds(), 10) + " " + strconv.FormatInt(h.backstop.Milliseconds(), 10) + " " + h.key
}

// parseUniqueHeader reads a header's value (uniqueHeader.String).
func parseUniqueHeader(v string) (uniqueHeader, error) {
	lease, rest, ok1 := strings.Cut(v, " ")
	backstop, key, ok2 := strings.Cut(rest, " ")
	l, err1 := strconv.ParseInt(lease, 10, 64)
	b, err2 := strconv.ParseInt(backstop, 10, 64)
	const maxMs = math.MaxInt64 / int64(time.Millisecond)
	h := uniqueHeader{key: key, lease: time.Duration(l) * time.Millisecond, backstop: time.Duration(b) * time.Millisecond}
	if !ok1 || !ok2 || err1 != nil || err2 != nil || l > maxMs || b > maxMs || h.lease < MinTTL || h.backstop < h.lease || key == "" {
		return h, lockdriver.InvalidArgument("validate", "malformed "+uniqueHeaderName+" header")
	}
	return h, nil
}

// runTask runs h. A task enqueued with UniqueUntilDone runs under a lease
// of its unique key as well, kept alive while it runs: a producer finds
// the key held and refuses a duplicate; a worker that dies lets the
// lease lapse, and the key frees a lease later. A task whose key records
// another task was superseded (it was taken for dead after its worker
// died) and is dropped. After a failed attempt that asynq will retry, the release
// records the attempt, so the key stays taken until the retry.
func (g *Guard) runTask(ctx context.Context, h asynq.Handler, t *asynq.Task) error {
	v, ok := t.Headers()[uniqueHeaderName]
	if !ok {
		return h.ProcessTask(ctx, t)
	}
	u, err := parseUniqueHeader(v)
	if err != nil {
		return invalidKey(err)
	}
	r, ok := g.b.(lock.Recorder)
	if !ok {
		return fmt.Errorf("asynqlock: a unique task needs a backend that implements lock.Recorder: %w: %w",
			errors.ErrUnsupported, asynq.SkipRetry)
	}
	id, _ := asynq.GetTaskID(ctx)
	queue, _ := asynq.GetQueueName(ctx)
	var seq int
	superseded := &DuplicateError{Superseded: true, Dropped: true}
	release := func(rctx context.Context, l lock.Lease, outcome error) error {
		if outcome == nil || errors.Is(outcome, superseded) || finalAttempt(ctx, outcome) {
			return r.Release(rctx, l.ID)
		}
		retried, _ := asynq.GetRetryCount(ctx)
		rec, _ := json.Marshal(uniqueRecord{ID: id, Queue: queue, Seq: seq, Ended: retried})
		return r.ReleaseRecord(rctx, l, rec, u.backstop)
	}
	ran := false
	err = lock.Do(ctx, r, u.key, func(held context.Context, l lock.Lease) error {
		ran = true
		rec, ok, err := readRecord(held, r, u.key)
		switch {
		case err != nil:
			return fmt.Errorf("asynqlock: unique: %w", err)
		case ok && rec.ID != id:
			return superseded
		}
		seq = rec.Seq
		if rec.OrphanMs != 0 {
			recordRun(held, r, u, id, l)
		}
		return h.ProcessTask(held, t)
	}, lock.WithTTL(u.lease), lock.WithWait(uniqueWait), lock.WithReleaseTimeout(ReleaseTimeout),
		lock.WithReleaseFunc(release))
	if ran || !errors.Is(err, lock.ErrLocked) {
		return err
	}
	// Held past the wait: by another delivery of this task (asynq's own
	// lease ended under a stalled worker), or by the task that superseded it.
	if rec, ok, rerr := readRecord(ctx, r, u.key); rerr == nil && ok && rec.ID != id {
		return superseded
	}
	exp := time.Now().Add(u.lease)
	var le *lock.LockedError
	if errors.As(err, &le) && !le.ExpiresAt.IsZero() {
		exp = le.ExpiresAt
	}
	return &DuplicateError{ExpiresAt: exp}
}

// recordRun records that the Guard holding lease l on u's key runs task
// id, whose record carries an orphan mark: a producer found the task
// running before the Guard took the key (asynq had just delivered it).
// Should the lease lapse while the task runs, producers then count a
// lease from when they find it lapsed, not from that mark. Best effort:
// without it, they count from the mark, as with a backend that stored
// nothing.
func recordRun(ctx context.Context, r lock.Recorder, u uniqueHeader, id string, l lock.Lease) {
	key := uniqueRunKey(u.key)
	rl, err := r.Acquire(ctx, key, u.lease)
	if err != nil {
		return
	}
	run, _ := json.Marshal(uniqueRun{ID: id, StartMs: l.ExpiresAt.Add(-u.lease).UnixMilli()})
	if err := r.ReleaseRecord(ctx, rl, run, u.backstop); err != nil {
		logReleaseError(rl, err)
	}
}

// finalAttempt reports whether asynq will not retry a task that failed
// with err: archived (asynq.SkipRetry, or the last retry) or deleted
// (asynq.RevokeTask).
func finalAttempt(ctx context.Context, err error) bool {
	if errors.Is(err, asynq.SkipRetry) || errors.Is(err, asynq.RevokeTask) {
		return true
	}
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry && IsFailure(err)
}
