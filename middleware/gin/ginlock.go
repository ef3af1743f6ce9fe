package ginlock

import (
	"context"
	"errors"
	"net/http"
	"runtime"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// New returns gin middleware that runs each request under the lock on
// its key, read by key, in b. A nil backend, a nil key or a bad option
// is an InvalidArgument *lock.Error that names it, and nothing reaches b.
func New(b lock.Backend, key KeyFunc, opts ...Option) (gin.HandlerFunc, error) {
	var c config
	settings.Apply(&c, opts)
	c.S.HasKey = key != nil
	g, err := core.New(b, c.S)
	if err != nil {
		return nil, err
	}
	m := &middleware{g: g, key: key, config: c}
	if m.Busy == nil {
		m.Busy = DefaultBusyHandler
	}
	if m.Error == nil {
		m.Error = DefaultErrorHandler
	}
	return m.handle, nil
}

// Must is like New but panics on a bad configuration.
func Must(b lock.Backend, key KeyFunc, opts ...Option) gin.HandlerFunc {
	mw, err := New(b, key, opts...)
	if err != nil {
		panic(err)
	}
	return mw
}

type middleware struct {
	g      *core.Guard
	key    KeyFunc
	config // the options' functions (Scope, Fingerprint, Busy, Error, Skip)
}

// handle locks the request's key around the rest of the chain, or
// replays, or aborts c with the refusal's answer.
func (m *middleware) handle(c *gin.Context) {
	if m.Skip != nil && m.Skip(c) {
		return
	}
	req := c.Request
	run := &run{m: m, c: c}
	x := core.Exchange{R: req, Route: core.Route(req.Method, c.FullPath(), req.URL.EscapedPath()),
		Key: func() (string, error) { return m.key(c) }, Next: run.next}
	if m.g.Replays() {
		x.W = eager{c.Writer}
		defer run.abort()
	}
	if m.Scope != nil {
		x.Scope = func() (string, error) { return m.Scope(c) }
	}
	if m.Fingerprint != nil {
		x.Fingerprint = func() (string, error) { return m.Fingerprint(c) }
	}
	out, err := m.g.Serve(x)
	run.returned = true
	switch {
	case out == core.Replayed:
		c.Abort()
	case out == core.Ran:
	case errors.Is(err, lock.ErrLocked):
		_ = c.Error(err)
		c.Request = m.g.Refusal(req)
		m.Busy(c, m.g.RetryAfter(x.Route, err), err)
		c.Abort()
	default:
		_ = c.Error(err)
		c.Request = m.g.Refusal(req)
		m.Error(c, err)
		c.Abort()
	}
}

// run is one request's pass through the rest of the chain.
type run struct {
	m        *middleware
	c        *gin.Context
	w        *writer // replay mode's writer, once the chain runs
	returned bool    // Serve returned
}

// next runs the rest of the chain with the held context and, in replay
// mode, a writer over the guard's capture; both are restored after it.
// A chain that wrote nothing and left errors on c.Errors is left to the
// middleware in front (core.ErrUnanswered).
func (r *run) next(ctx context.Context, wrap core.Wrap) error {
	c := r.c
	req, orig := c.Request, c.Writer
	defer func() { c.Request, c.Writer = req, orig }()
	c.Request = req.WithContext(ctx)
	if !r.m.g.Replays() {
		c.Next()
		return nil
	}
	r.w = &writer{ResponseWriter: orig, cw: wrap(eager{orig}), status: orig.Status(), size: -1}
	c.Writer = r.w
	errs := len(c.Errors)
	c.Next()
	if !r.w.Written() {
		if len(c.Errors) > errs {
			return core.ErrUnanswered
		}
		r.w.WriteHeaderNow() // as gin does after the last handler
	}
	return nil
}

// abort ends the goroutine when the guard aborts a response that had
// started (a panic after a flush): gin's Recovery would swallow the
// http.ErrAbortHandler panic and let the cut response end as if whole;
// runtime.Goexit makes net/http close the connection or reset the
// HTTP/2 stream.
func (r *run) abort() {
	if r.returned || r.w == nil || !core.Sent(r.w.cw) {
		return
	}
	if v := recover(); v != http.ErrAbortHandler {
		panic(v)
	}
	runtime.Goexit()
}

// LeaseFrom returns the lease held for c's request (lock.LeaseFrom of
// its context); false when none is held.
func LeaseFrom(c *gin.Context) (lock.Lease, bool) {
	return lock.LeaseFrom(c.Request.Context())
}
