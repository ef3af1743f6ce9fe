package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// Exchange is one request as an adapter hands it to [Guard.Serve].
type Exchange struct {
	// W receives replayed responses.
	W http.ResponseWriter
	// R is the request. In replay mode its Body is read, then replaced,
	// before Key runs.
	R *http.Request
	// Route is the request's route (see [Route]).
	Route string
	// Scope returns the authenticated principal (Config.Scoped).
	Scope func() (string, error)
	// Key returns the raw key (the adapter's key function).
	Key func() (string, error)
	// Fingerprint returns the application's part of the fingerprint.
	Fingerprint func() (string, error)
	// Next runs the handler with ctx, the held context, writing through
	// wrap(w). In replay mode it renders a handler's error itself, so
	// that it is captured.
	Next func(ctx context.Context, wrap Wrap) error
	// Log receives the guard's log lines; nil: slog's default.
	Log *slog.Logger
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

// Serve runs x's handler under the lock on its key: the request's scope
// (with Config.Scoped), then its raw key. A request without a scope or a
// valid key is refused before anything else is checked.
//
// Without replay it is [Guard.Run] on that key. In replay mode it
// fingerprints the request and replays a record stored for the key, or
// refuses as the record says. Without one it acquires, looks again under
// the lease, runs the handler, and stores its response with the release.
// docs/http.md (replay mode) has every answer, mark and panic rule.
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
		ran, err := g.Run(withLog(x.R.Context(), x.Log), key, func(ctx context.Context) error {
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

// requestKey returns the lock key of x, through [Guard.CallKey].
func (g *Guard) requestKey(x Exchange) (string, error) {
	return g.CallKey(x.Route, x.Scope, x.Key)
}

// CallKey returns the lock key of a call on route: its scope, when the
// Guard is scoped, and its raw key.
func (g *Guard) CallKey(route string, scope, key func() (string, error)) (string, error) {
	var principal string
	if g.scoped {
		if scope == nil {
			return "", fmt.Errorf("%w: the adapter gave no scope function", guard.ErrScope)
		}
		p, err := scope()
		switch {
		case err != nil:
			return "", fmt.Errorf("%w: %w", guard.ErrScope, err)
		case p == "":
			return "", fmt.Errorf("%w: the scope is empty", guard.ErrScope)
		}
		principal = p
	}
	raw, err := key()
	return g.Key(route, principal, raw, err)
}

func identity(w http.ResponseWriter) http.ResponseWriter { return w }

// timed starts timing a run of route; the returned func records it.
func (g *Guard) timed(route string) func() { return g.Timed(route) }

// Timed starts timing a run of route, for [Guard.RetryAfter].
func (g *Guard) Timed(route string) func() {
	start := time.Now()
	return func() { g.holds.observe(route, time.Since(start)) }
}

func (g *Guard) serveReplay(x Exchange, key string, fp [fingerprintSize]byte) (Outcome, error) {
	ctx := withLog(x.R.Context(), x.Log)
	hr := &httpRun{g: g, x: x, key: key, fp: fp}
	r := g.Recorded(ctx, key, fp, hr.run)
	switch r.Outcome {
	case Replayed:
		g.replay.writeReplay(x.W, r.Record)
		return Replayed, nil
	case Ran:
		if hr.c.w != nil {
			hr.c.send(g.notStoredMark(ctx, key, hr.c, r))
		}
		return Ran, hr.nextErr
	}
	return Refused, r.Err
}

// httpRun is the run of an HTTP request in replay mode: its handler
// writes to a capture, whose response becomes the record.
type httpRun struct {
	g       *Guard
	x       Exchange
	key     string
	fp      [fingerprintSize]byte
	c       *capture
	nextErr error
}

func (hr *httpRun) run(held context.Context, l lock.Lease) ([]byte, error) {
	rp := hr.g.replay
	c := newCapture(nil, rp)
	hr.c = c
	func() {
		defer hr.g.timed(hr.x.Route)()
		returned := false
		defer func() {
			if returned || c.w == nil {
				return
			}
			if c.sent {
				// The response cannot be taken back: abort.
				abort(held, hr.key, c.w, recover())
			}
			c.discard() // a panic: nothing of the response goes out
		}()
		hr.nextErr = hr.x.Next(held, func(w http.ResponseWriter) http.ResponseWriter {
			c.bind(w)
			return c
		})
		returned = true
	}()
	if c.w == nil || errors.Is(hr.nextErr, ErrUnanswered) && c.status == 0 {
		return nil, hr.nextErr // nothing written through wrap; nothing to store
	}
	c.ended()
	switch k, _ := c.outcome(rp); k {
	case storeResponse:
		return (&wire.Record{Fence: l.Fence, Fingerprint: hr.fp, Status: c.status,
			Header: rp.keepHeaders(c.header), Trailer: rp.keepHeaders(c.trailers()), Body: c.body.Bytes()}).Encode(), hr.nextErr
	case storeCompleted:
		return (&wire.Record{Fence: l.Fence, Fingerprint: hr.fp, Completed: true, Status: c.status}).Encode(), hr.nextErr
	}
	return nil, hr.nextErr
}

// abort ends a handler that panicked with p after its response started
// on w: it logs p, closes the connection when it can, and panics with
// http.ErrAbortHandler.
func abort(ctx context.Context, key string, w http.ResponseWriter, p any) {
	if p != http.ErrAbortHandler {
		logOf(ctx).ErrorContext(ctx, "syncguard: the handler panicked after its response started; aborting the connection",
			"key_hash", lockdriver.HashKey(key), "panic", fmt.Sprint(p))
	}
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
	panic(http.ErrAbortHandler)
}

// notStoredMark returns the HeaderNotStored value of the response c (""
// when it is stored), from what r says of its record.
func (g *Guard) notStoredMark(ctx context.Context, key string, c *capture, r *Recording) string {
	k, mark := c.outcome(g.replay)
	if k == storeNothing {
		return mark
	}
	return r.StoreMark(ctx, key, mark)
}
