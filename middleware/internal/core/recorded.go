package core

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// Recording is what [Guard.Recorded] did with a request.
type Recording struct {
	// Outcome is Replayed (Record answers the request), Ran (the run
	// function ran) or Refused (Err says why).
	Outcome Outcome
	// Record is the stored response to replay, with Replayed.
	Record *wire.Record
	// Err is why a request was refused; with Ran, lock.Do's error, such
	// as a lost lease.
	Err error

	recorded bool // a record went to the release, and lock.Do returned nil
	stored   firstResult
}

// RunFunc runs a request's handler while the lease l is held, with held
// its context, and returns the record to store as l is released (nil:
// none, a plain release) and the handler's error.
type RunFunc func(held context.Context, l lock.Lease) (record []byte, err error)

// Recorded is replay mode's flow, for a request with fingerprint fp on
// key (from [Guard.Key]). A record seen without the lock is final (only a
// completed run writes one, as it releases): a response stored for fp
// is replayed, and a record of a completed request without its response
// (ErrNotReplayable), one for another fingerprint (ErrKeyReused) or one
// that cannot be decoded (ErrBadRecord, logged) refuses. The first call,
// lock.Recorder.AcquireRecord, takes the lock or answers with the record
// in one step; a lease it took runs run at once. A busy key is waited
// for as lock.Do waits, and a lease got that way looks again while held
// (a record written by the previous holder is visible then: a request
// that waited gets the first one's response) before it calls run. What
// run returns is stored with the release (lock.Recorder.ReleaseRecord)
// for the replay TTL. A request that gave up on a busy key looks once
// more, since the holder may be a duplicate that found the record. On a
// Recorder whose AcquireRecord is unsupported, it looks (Record) before
// it acquires. Replay mode must be on.
func (g *Guard) Recorded(ctx context.Context, key string, fp [wire.FingerprintSize]byte, run RunFunc) *Recording {
	rp := g.replay
	r := &Recording{}
	first, found, err := g.acquireRecord(ctx, key)
	switch {
	case err == nil && first.ID == "":
		r.Record, r.Err = g.decodeRecord(ctx, key, fp, found)
		return r.answered()
	case errors.Is(err, errSilent):
		// A silent backend is not a busy key: no wait.
		r.Outcome, r.Err = Refused, err
		return r
	case err == nil, errors.Is(err, lock.ErrLocked), lock.CodeOf(err).Transient():
		// A lease, or a wait as lock.Do's for a busy key or a failure
		// it retries.
	case errors.Is(err, errors.ErrUnsupported):
		if r.Record, r.Err = g.Lookup(ctx, key, fp); r.Record != nil || r.Err != nil {
			return r.answered()
		}
	default:
		r.Outcome, r.Err = Refused, err
		return r
	}
	var rec []byte
	var runErr, refused error
	release := func(rctx context.Context, l lock.Lease, outcome error) error {
		if outcome == nil && rec != nil {
			err := rp.rec.ReleaseRecord(rctx, l, rec, rp.ttl)
			r.stored.set(err)
			return err
		}
		return g.b.Release(rctx, l.ID)
	}
	opts := append(g.opts[:len(g.opts):len(g.opts)], lock.WithReleaseFunc(release))
	if first.ID != "" {
		// AcquireRecord found no record as it took the lease, and only
		// the release of a lease on key stores one.
		opts = append(opts, lock.WithLease(first))
	}
	err = lock.Do(ctx, g.b, key, func(held context.Context, l lock.Lease) error {
		var found *wire.Record
		var err error
		if first.ID == "" {
			found, err = g.Lookup(held, key, fp)
		}
		switch {
		case found != nil:
			r.Record = found
		case err != nil:
			refused = err
			return err
		default:
			r.Outcome = Ran
			rec, runErr = run(held, l)
		}
		return nil
	}, opts...)
	return g.recordedEnd(ctx, key, fp, r, rec != nil, runErr, refused, err)
}

// acquireRecord is replay's first call, lock.Recorder.AcquireRecord,
// under the backend timeout.
func (g *Guard) acquireRecord(ctx context.Context, key string) (first lock.Lease, found []byte, err error) {
	err = g.bounded(ctx, "acquire", func(ctx context.Context) (err error) {
		first, found, err = g.replay.rec.AcquireRecord(ctx, key, g.ttl)
		return err
	})
	return first, found, err
}

// answered completes r, whose Record or Err a record seen without the
// lock gave.
func (r *Recording) answered() *Recording {
	r.Outcome = Replayed
	if r.Err != nil {
		r.Outcome = Refused
	}
	return r
}

// recordedEnd completes r from lock.Do's error err in Recorded.
func (g *Guard) recordedEnd(ctx context.Context, key string, fp [wire.FingerprintSize]byte, r *Recording, rec bool, runErr, refused, err error) *Recording {
	switch {
	case r.Record != nil:
		r.Outcome = Replayed
	case r.Outcome == Ran:
		r.recorded, r.Err = rec && err == nil, err
		if runErr == nil && err != nil {
			logOf(ctx).WarnContext(ctx, "syncguard: lease lost while the handler ran; its work may not have been exclusive, and its response was not stored",
				"key_hash", lockdriver.HashKey(key), "error", err)
		}
	case refused != nil:
		r.Err = refused
	case err == nil:
		r.Err = lockdriver.InvalidArgument("do", "lock.Do returned without running the handler")
	case errors.Is(err, lock.ErrLocked):
		found, rerr := g.Lookup(ctx, key, fp)
		switch {
		case found != nil:
			r.Outcome, r.Record = Replayed, found
		case errors.Is(rerr, guard.ErrKeyReused), errors.Is(rerr, guard.ErrBadRecord), errors.Is(rerr, guard.ErrNotReplayable):
			r.Err = rerr
		default:
			r.Err = err
		}
	default:
		r.Err = err
	}
	g.logDenied(ctx, key, r.Err)
	return r
}

// StoreMark returns the HeaderNotStored value of a run that gave a
// record to store: mark ("" or NotStoredTooLarge) when it was stored,
// else NotStoredLeaseLost, or NotStoredPending when the first write
// failed (logged; lock.Do retries it in the background).
func (r *Recording) StoreMark(ctx context.Context, key, mark string) string {
	tried, err := r.stored.get()
	switch {
	case !r.recorded, !tried, errors.Is(err, lock.ErrNotHeld):
		return guard.NotStoredLeaseLost
	case err != nil:
		logOf(ctx).WarnContext(ctx, "syncguard: the response record could not be stored; the release is retried in the background for the lease's remaining time, and the response goes out marked "+guard.HeaderNotStored+": "+guard.NotStoredPending,
			"key_hash", lockdriver.HashKey(key), "error", err)
		return guard.NotStoredPending
	}
	return mark
}

// Lookup returns the record stored for key when it holds the response to
// a request with fingerprint fp. A record of a completed request without
// its response gives ErrNotReplayable, a record for another fingerprint
// ErrKeyReused, one that cannot be decoded ErrBadRecord (logged); no
// record gives nil, nil; a backend failure its error.
func (g *Guard) Lookup(ctx context.Context, key string, fp [wire.FingerprintSize]byte) (*wire.Record, error) {
	var b []byte
	var ok bool
	err := g.bounded(ctx, "record", func(ctx context.Context) (err error) {
		b, ok, err = g.replay.rec.Record(ctx, key)
		return err
	})
	if err != nil || !ok {
		return nil, err
	}
	return g.decodeRecord(ctx, key, fp, b)
}

// decodeRecord is [Guard.Lookup] for b, the record stored for key.
func (g *Guard) decodeRecord(ctx context.Context, key string, fp [wire.FingerprintSize]byte, b []byte) (*wire.Record, error) {
	r, err := wire.DecodeRecord(b)
	if err != nil {
		logOf(ctx).ErrorContext(ctx, "syncguard: the value stored for this key is not a response record this version can read; refusing its requests (ErrBadRecord), neither replaying nor running the handler, until it expires or is deleted",
			"key_hash", lockdriver.HashKey(key), "bytes", len(b), "error", err)
		return nil, fmt.Errorf("%w: %w", guard.ErrBadRecord, err)
	}
	switch {
	case r.Fingerprint != fp:
		return nil, guard.ErrKeyReused
	case r.Completed:
		return nil, &guard.NotReplayableError{Status: r.Status}
	}
	return r, nil
}

// firstResult keeps the result of the first call of a release function
// that lock.Do may call again in the background.
type firstResult struct {
	mu    sync.Mutex
	tried bool
	err   error
}

func (f *firstResult) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.tried {
		f.tried, f.err = true, err
	}
}

func (f *firstResult) get() (tried bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tried, f.err
}
