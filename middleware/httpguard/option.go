package httpguard

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures the middleware of an adapter built with options
// (httplock.New). The options here hold for every adapter; each adapter
// adds those that take its framework's functions (WithKeyFunc, ...).
type Option func(*settings.Settings)

// WithPrefix prepends ns verbatim to every key, so that middleware
// sharing a backend does not share keys.
func WithPrefix(ns string) Option { return func(s *settings.Settings) { s.Prefix = ns } }

// WithTTL sets the lease duration (default DefaultTTL, at least MinTTL;
// 0 is an error). The lease is kept alive while the handler runs.
func WithTTL(d time.Duration) Option {
	return func(s *settings.Settings) { s.TTL = d; s.Mark("TTL") }
}

// WithWait sets how long a request waits for a busy key (default 0: one
// attempt, then 409).
func WithWait(d time.Duration) Option { return func(s *settings.Settings) { s.Wait = d } }

// WithFailOpen runs the handler without a lease when the backend fails,
// instead of answering 503. It cannot be combined with WithReplay.
func WithFailOpen(open bool) Option { return func(s *settings.Settings) { s.FailOpen = open } }

// WithLockOptions passes options to lock.Do. The middleware's TTL, wait
// and limit win over those given here.
func WithLockOptions(opts ...lock.Option) Option {
	return func(s *settings.Settings) { s.LockOptions = append(s.LockOptions, opts...) }
}

// WithRouteScope sets whether keys include the route: the method and the
// route pattern (default on for locks and replay, off for limits).
func WithRouteScope(on bool) Option {
	return func(s *settings.Settings) {
		s.RouteScope = settings.RouteOff
		if on {
			s.RouteScope = settings.RouteOn
		}
	}
}

// Unscoped says that replay runs without a scope: any client that sends
// a key is served its stored response. For public endpoints only.
func Unscoped() Option { return func(s *settings.Settings) { s.Unscoped = true } }

// WithProblemTypeBase makes the problem types of the default answers the
// absolute http(s) URI uri followed by their names ("lock-busy").
func WithProblemTypeBase(uri string) Option {
	return func(s *settings.Settings) { s.ProblemBase = uri }
}

// WithLimit makes the key a concurrency limit of n slots (1 to
// lockdriver.MaxLimit): at most n requests per key run at once, the rest
// get 429. It needs a lock.IDBackend and cannot be combined with replay.
func WithLimit(n int) Option {
	return func(s *settings.Settings) { s.Limit = n; s.Mark("Limit") }
}

// WithReplay turns replay mode on: the first response to a key is stored
// for ttl (at least MinReplayTTL) with the release, and a retry gets it
// back byte for byte without running the handler. It needs a
// lock.Recorder backend and WithScope (or Unscoped). See docs/http.md.
func WithReplay(ttl time.Duration) Option {
	return func(s *settings.Settings) { s.ReplayOn, s.Replay.TTL = true, ttl; s.Mark("Replay.TTL") }
}

// WithReplayStatuses sets which statuses are stored (default
// DefaultReplayStatus). Needs WithReplay.
func WithReplayStatuses(store func(status int) bool) Option {
	return tune("Replay.Statuses", func(r *settings.Replay) { r.Statuses = store })
}

// WithReplayHeaders sets the response headers stored and replayed
// (default DefaultReplayHeaders). Needs WithReplay.
func WithReplayHeaders(names ...string) Option {
	names = append([]string{}, names...)
	return tune("Replay.Headers", func(r *settings.Replay) { r.Headers = names })
}

// WithReplayMaxBody sets the largest response body stored (default
// DefaultReplayMaxBody). Needs WithReplay.
func WithReplayMaxBody(n int64) Option {
	return tune("Replay.MaxBody", func(r *settings.Replay) { r.MaxBody = n })
}

// WithReplayMaxRequestBody sets the largest request body accepted, read
// for the fingerprint (default DefaultReplayMaxRequestBody). Needs
// WithReplay.
func WithReplayMaxRequestBody(n int64) Option {
	return tune("Replay.MaxRequestBody", func(r *settings.Replay) { r.MaxRequestBody = n })
}

// tune is a replay option named name.
func tune(name string, f func(*settings.Replay)) Option {
	return func(s *settings.Settings) {
		f(&s.Replay)
		s.Tuned = name
	}
}
