package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Exchange is one request as an adapter hands it to [Guard.Serve].
type Exchange struct {
	// W receives replayed responses (for Echo, its *echo.Response, so
	// Echo sees the response committed).
	W http.ResponseWriter
	// R is the request. In replay mode its Body is read for the
	// fingerprint and replaced by a reader of the same bytes, before Key
	// runs.
	R *http.Request
	// Route is the request's route (see [Route]).
	Route string
	// Key returns the raw key (the adapter's key function).
	Key func() (string, error)
	// Fingerprint, when not nil, returns the application's part of the
	// fingerprint (replay mode only).
	Fingerprint func() (string, error)
	// Next runs the handler with ctx, the held context. The adapter must
	// send the handler's output through wrap(w), for w the writer the
	// handler would use; wrap is the identity outside replay mode. When
	// the framework renders a handler's error after the middleware
	// returns, Next renders it itself in replay mode (Guard.Replays), so
	// that it is captured.
	Next func(ctx context.Context, wrap func(http.ResponseWriter) http.ResponseWriter) error
}

// Outcome says what Serve did with a request.
type Outcome int

const (
	// Refused: the handler did not run and nothing was written; the error
	// says why, for the adapter's busy or error answer.
	Refused Outcome = iota
	// Ran: the handler ran; the error is its own.
	Ran
	// Replayed: a stored response was written to Exchange.W.
	Replayed
)

// Serve runs x's handler under the lock on its key.
//
// Without replay it is [Guard.Run] on the key from [Guard.Key].
//
// In replay mode it first fingerprints the request, then looks for a
// response stored for the key: one stored for the same fingerprint is
// replayed, one for another fingerprint refuses with ErrKeyReused, and
// one that cannot be decoded refuses with ErrBadRecord (logged). A record
// seen without the lock is final (only a successful run writes one, as it
// releases), so only its absence needs the lock: Serve then acquires,
// looks again while holding the lease (a record written by the run that
// held the key before is always visible then; this is how a request that
// waited for a busy key gets the first one's response), and runs the
// handler. When the handler ends with a status under 500, a body within
// the limit, no panic and the lease kept, the response is stored, with
// the lease's fence and the fingerprint, by the release itself
// (lock.Recorder.ReleaseRecord), for the replay TTL. Otherwise the key is
// released plainly and the next request runs the handler again.
func (g *Guard) Serve(x Exchange) (Outcome, error) {
	var fp [fingerprintSize]byte
	if g.replay != nil {
		var err error
		if fp, err = g.replay.fingerprint(x.R, x.Route, x.Fingerprint); err != nil {
			return Refused, err
		}
	}
	raw, err := x.Key()
	key, err := g.Key(x.Route, raw, err)
	if err != nil {
		return Refused, err
	}
	if g.replay == nil {
		ran, err := g.Run(x.R.Context(), key, func(ctx context.Context) error {
			defer g.timed(x.Route)()
			return x.Next(ctx, identity)
		})
		if ran {
			return Ran, err
		}
		return Refused, err
	}
	return g.serveReplay(x, key, fp)
}

func identity(w http.ResponseWriter) http.ResponseWriter { return w }

// timed starts timing a run of route; the returned func records it.
func (g *Guard) timed(route string) func() {
	start := time.Now()
	return func() { g.holds.observe(route, time.Since(start)) }
}

func (g *Guard) serveReplay(x Exchange, key string, fp [fingerprintSize]byte) (Outcome, error) {
	ctx := x.R.Context()
	rp := g.replay
	found, err := g.replayStored(ctx, x.W, key, fp)
	switch {
	case found:
		return Replayed, nil
	case err != nil && errors.Is(err, ErrKeyReused), errors.Is(err, ErrBadRecord):
		return Refused, err
	case err != nil:
		if g.failOpen && failsOpen(err) {
			return Ran, x.Next(ctx, identity)
		}
		return Refused, err
	}

	var (
		ran, replayed bool
		refused       error // why the handler did not run, with the lease held
		nextErr       error
		rec           []byte // the record to store at release; nil: none
	)
	release := func(rctx context.Context, l lock.Lease, outcome error) error {
		if outcome == nil && rec != nil {
			return rp.rec.ReleaseRecord(rctx, l, rec, rp.ttl)
		}
		return g.b.Release(rctx, l.ID)
	}
	opts := append(g.opts[:len(g.opts):len(g.opts)], lock.WithReleaseFunc(release))
	err = lock.Do(ctx, g.b, key, func(held context.Context, l lock.Lease) error {
		// While holding the key: a record written as the previous holder
		// released is visible now.
		found, err := g.replayStored(held, x.W, key, fp)
		if found {
			replayed = true
			return nil
		}
		if err != nil {
			refused = err
			return err
		}
		ran = true
		c := newCapture(nil, rp.maxBody)
		func() {
			defer g.timed(x.Route)()
			defer c.finish() // on panic too: what the handler wrote goes out
			nextErr = x.Next(held, func(w http.ResponseWriter) http.ResponseWriter {
				c.w = w
				return c
			})
		}()
		if c.w == nil {
			return nil // the adapter did not write through wrap; nothing to store
		}
		if status, h, body, ok := c.response(); ok {
			rec = (&record{fence: l.Fence, fingerprint: fp, status: status,
				header: rp.keepHeaders(h), body: body}).encode()
		}
		return nil
	}, opts...)
	switch {
	case replayed:
		return Replayed, nil
	case ran:
		if nextErr == nil && err != nil {
			slog.WarnContext(ctx, "syncguard: lease lost while the handler ran; its work may not have been exclusive, and its response was not stored",
				"key_hash", lock.HashKey(key), "error", err)
		}
		return Ran, nextErr
	case refused != nil:
		return Refused, refused
	case err == nil:
		return Refused, lock.InvalidArgument("do", "lock.Do returned without running the handler")
	case errors.Is(err, lock.ErrLocked):
		// The holder may be a request that found the record and is
		// releasing: a record seen now is final too.
		if found, rerr := g.replayStored(ctx, x.W, key, fp); found || errors.Is(rerr, ErrKeyReused) || errors.Is(rerr, ErrBadRecord) {
			if found {
				return Replayed, nil
			}
			return Refused, rerr
		}
		return Refused, err
	case g.failOpen && failsOpen(err):
		return Ran, x.Next(ctx, identity)
	}
	return Refused, err
}

// replayStored looks up the record for key and, when it is for fp,
// writes it to w (found). A record for another fingerprint gives
// ErrKeyReused, one that cannot be decoded ErrBadRecord (logged once
// here); no record gives false, nil; a backend failure its error.
func (g *Guard) replayStored(ctx context.Context, w http.ResponseWriter, key string, fp [fingerprintSize]byte) (found bool, err error) {
	b, ok, err := g.replay.rec.Record(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	r, err := decodeRecord(b)
	if err != nil {
		slog.ErrorContext(ctx, "syncguard: the value stored for this key is not a response record this version can read; answering 500, neither replaying nor running the handler, until it expires or is deleted",
			"key_hash", lock.HashKey(key), "bytes", len(b), "error", err)
		return false, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	if r.fingerprint != fp {
		return false, ErrKeyReused
	}
	g.replay.writeReplay(w, r)
	return true, nil
}
