package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
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
	// Scope returns the request's scope, the authenticated principal
	// (Config.Scoped); nil otherwise.
	Scope func() (string, error)
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
	Next func(ctx context.Context, wrap Wrap) error
}

// ErrUnanswered is what Exchange.Next returns in replay mode when the
// handler wrote nothing and left its errors to a middleware in front
// (gin's c.Errors): nothing is stored or sent, and a retry runs again.
var ErrUnanswered = errors.New("guard: the handler left its answer to a middleware in front")

// Wrap gives the writer the handler must write to in place of w: the
// capture of replay mode, or w itself.
type Wrap = func(w http.ResponseWriter) http.ResponseWriter

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
// The key is the request's scope (with Config.Scoped), then its raw key
// (see [Guard.Key]); a request without a scope is refused with ErrScope,
// one without a valid key with an InvalidArgument error, before anything
// else is checked.
//
// Without replay it is [Guard.Run] on that key.
//
// In replay mode it also fingerprints the request, then looks for a
// record stored for the key: a response stored for the same fingerprint
// is replayed, a record of a completed request whose response could not
// be stored refuses with ErrNotReplayable, a record for another
// fingerprint refuses with ErrKeyReused, and one that cannot be decoded
// refuses with ErrBadRecord (logged). A record seen without the lock is
// final (only a completed run writes one, as it releases), so only its
// absence needs the lock: Serve then acquires, looks again while holding
// the lease (a record written by the run that held the key before is
// always visible then; this is how a request that waited for a busy key
// gets the first one's response), and runs the handler.
//
// The handler's response is held back until the release: when the
// handler returns with a status ReplayConfig.Statuses accepts and the
// lease kept, the release itself stores the record
// (lock.Recorder.ReleaseRecord), with the lease's fence and the
// fingerprint, for the replay TTL: the response, or, when its body
// passed the limit (that response is sent as it is written, marked
// NotStoredTooLarge), only that the request completed. The response then
// goes out, marked with HeaderNotStored when it is not stored: its status
// is not stored (NotStoredStatus; the key is released plainly and a retry
// runs the handler), the lease was lost (NotStoredLeaseLost), or the
// record's first write failed (NotStoredPending; lock.Do retries the
// release in the background). A handler that panics before its status
// went out sends nothing of what it wrote and stores nothing; the panic
// goes on, for a recovering middleware in front to answer 500. One that
// panics after it (a flush, a body past MaxBody) aborts the connection
// (http.ErrAbortHandler). A handler that hijacks the connection stores
// nothing.
func (g *Guard) Serve(x Exchange) (Outcome, error) {
	var body []byte
	var bodyErr error
	if g.replay != nil {
		body, bodyErr = g.replay.readBody(x.R)
	}
	key, err := g.requestKey(x)
	if err != nil {
		return Refused, err
	}
	if bodyErr != nil {
		return Refused, bodyErr
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
	fp, err := g.replay.fingerprint(x.R, x.Route, body, x.Fingerprint)
	if err != nil {
		return Refused, err
	}
	return g.serveReplay(x, key, fp)
}

// requestKey returns the lock key of x: its scope, when the Guard is
// scoped, and its raw key, through [Guard.Key].
func (g *Guard) requestKey(x Exchange) (string, error) {
	var principal string
	if g.scoped {
		if x.Scope == nil {
			return "", fmt.Errorf("%w: the adapter gave no scope function", httpguard.ErrScope)
		}
		p, err := x.Scope()
		switch {
		case err != nil:
			return "", fmt.Errorf("%w: %w", httpguard.ErrScope, err)
		case p == "":
			return "", fmt.Errorf("%w: the scope is empty", httpguard.ErrScope)
		}
		principal = p
	}
	raw, err := x.Key()
	return g.Key(x.Route, principal, raw, err)
}

func identity(w http.ResponseWriter) http.ResponseWriter { return w }

// timed starts timing a run of route; the returned func records it.
func (g *Guard) timed(route string) func() {
	start := time.Now()
	return func() { g.holds.observe(route, time.Since(start)) }
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

func (g *Guard) serveReplay(x Exchange, key string, fp [fingerprintSize]byte) (Outcome, error) {
	ctx := x.R.Context()
	rp := g.replay
	found, err := g.replayStored(ctx, x.W, key, fp)
	switch {
	case found:
		return Replayed, nil
	case err != nil:
		return Refused, err
	}

	var (
		ran, replayed bool
		refused       error // why the handler did not run, with the lease held
		nextErr       error
		c             *capture
		rec           []byte // the record to store at release; nil: none
		stored        firstResult
	)
	release := func(rctx context.Context, l lock.Lease, outcome error) error {
		if outcome == nil && rec != nil {
			err := rp.rec.ReleaseRecord(rctx, l, rec, rp.ttl)
			stored.set(err)
			return err
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
		c = newCapture(nil, rp)
		func() {
			defer g.timed(x.Route)()
			returned := false
			defer func() {
				if returned || c.w == nil {
					return
				}
				if c.sent {
					// A panic after the status went out (a flush, or a
					// body past MaxBody): the response cannot be taken
					// back, so the connection is aborted rather than let
					// a recovering middleware's answer follow it.
					abort(ctx, key, c.w, recover())
				}
				c.discard() // a panic: nothing of the response goes out
			}()
			nextErr = x.Next(held, func(w http.ResponseWriter) http.ResponseWriter {
				c.bind(w)
				return c
			})
			returned = true
		}()
		if c.w == nil || errors.Is(nextErr, ErrUnanswered) && c.status == 0 {
			return nil // nothing written through wrap; nothing to store
		}
		c.ended()
		switch k, _ := c.outcome(rp); k {
		case storeResponse:
			rec = (&wire.Record{Fence: l.Fence, Fingerprint: fp, Status: c.status,
				Header: rp.keepHeaders(c.header), Trailer: rp.keepHeaders(c.trailers()), Body: c.body.Bytes()}).Encode()
		case storeCompleted:
			rec = (&wire.Record{Fence: l.Fence, Fingerprint: fp, Completed: true, Status: c.status}).Encode()
		}
		return nil
	}, opts...)
	switch {
	case replayed:
		return Replayed, nil
	case ran:
		if c.w != nil {
			c.send(g.notStoredMark(ctx, key, c, rec != nil && err == nil, &stored))
		}
		if nextErr == nil && err != nil {
			slog.WarnContext(ctx, "syncguard: lease lost while the handler ran; its work may not have been exclusive, and its response was not stored",
				"key_hash", lockdriver.HashKey(key), "error", err)
		}
		return Ran, nextErr
	case refused != nil:
		return Refused, refused
	case err == nil:
		return Refused, lockdriver.InvalidArgument("do", "lock.Do returned without running the handler")
	case errors.Is(err, lock.ErrLocked):
		// The holder may be a request that found the record and is
		// releasing: a record seen now is final too.
		found, rerr := g.replayStored(ctx, x.W, key, fp)
		switch {
		case found:
			return Replayed, nil
		case errors.Is(rerr, httpguard.ErrKeyReused), errors.Is(rerr, httpguard.ErrBadRecord), errors.Is(rerr, httpguard.ErrNotReplayable):
			return Refused, rerr
		}
	}
	return Refused, err
}

// abort ends a handler that panicked with p after its response started
// on w: it logs p (unless it is http.ErrAbortHandler), closes the
// connection when it can (HTTP/1: no recovering middleware can write
// after it), and panics with http.ErrAbortHandler, on which net/http
// aborts the response without a log line, and which Echo's Recover
// passes on.
func abort(ctx context.Context, key string, w http.ResponseWriter, p any) {
	if p != http.ErrAbortHandler {
		slog.ErrorContext(ctx, "syncguard: the handler panicked after its response started; aborting the connection",
			"key_hash", lockdriver.HashKey(key), "panic", fmt.Sprint(p))
	}
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
	panic(http.ErrAbortHandler)
}

// notStoredMark returns the HeaderNotStored value of the response c (""
// when it is stored): recorded says whether a record was written at the
// release (stored tells how its first write went), else the lease was
// lost or the response is not one to store.
func (g *Guard) notStoredMark(ctx context.Context, key string, c *capture, recorded bool, stored *firstResult) string {
	k, mark := c.outcome(g.replay)
	if k == storeNothing {
		return mark
	}
	tried, err := stored.get()
	switch {
	case !recorded, !tried, errors.Is(err, lock.ErrNotHeld):
		return httpguard.NotStoredLeaseLost
	case err != nil:
		slog.WarnContext(ctx, "syncguard: the response record could not be stored; the release is retried in the background for the lease's remaining time, and the response goes out marked "+httpguard.HeaderNotStored+": "+httpguard.NotStoredPending,
			"key_hash", lockdriver.HashKey(key), "error", err)
		return httpguard.NotStoredPending
	}
	return mark
}

// replayStored looks up the record for key and, when it holds the
// response to a request with fingerprint fp, writes it to w (found). A
// record of a completed request without its response gives
// ErrNotReplayable, a record for another fingerprint ErrKeyReused, one
// that cannot be decoded ErrBadRecord (logged once here); no record gives
// false, nil; a backend failure its error.
func (g *Guard) replayStored(ctx context.Context, w http.ResponseWriter, key string, fp [fingerprintSize]byte) (found bool, err error) {
	b, ok, err := g.replay.rec.Record(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	r, err := wire.DecodeRecord(b)
	if err != nil {
		slog.ErrorContext(ctx, "syncguard: the value stored for this key is not a response record this version can read; answering 500, neither replaying nor running the handler, until it expires or is deleted",
			"key_hash", lockdriver.HashKey(key), "bytes", len(b), "error", err)
		return false, fmt.Errorf("%w: %w", httpguard.ErrBadRecord, err)
	}
	switch {
	case r.Fingerprint != fp:
		return false, httpguard.ErrKeyReused
	case r.Completed:
		return false, &httpguard.NotReplayableError{Status: r.Status}
	}
	g.replay.writeReplay(w, r)
	return true, nil
}
