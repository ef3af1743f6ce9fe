package httpguard

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures the middleware of an adapter built with options, such
// as httplock.New.
type Option func(*settings.Settings)

// WithPrefix prepends ns verbatim to every key.
func WithPrefix(ns string) Option { return func(s *settings.Settings) { s.Prefix = ns } }

// WithTTL sets the lease duration: DefaultTTL by default, at least MinTTL.
func WithTTL(d time.Duration) Option {
	return func(s *settings.Settings) { s.TTL = d; s.Mark("TTL") }
}

// WithWait sets how long a request waits for a busy key (default 0).
func WithWait(d time.Duration) Option { return func(s *settings.Settings) { s.Wait = d } }

// WithBackendTimeout bounds each call to the backend (default
// DefaultBackendTimeout): a request whose call is unanswered in d is
// refused as for a failing backend (503 with Retry-After), whatever its
// wait, which is for a busy key. The release is bounded by d too, and
// tried again in the background.
func WithBackendTimeout(d time.Duration) Option {
	return func(s *settings.Settings) { s.BackendTimeout = d; s.Mark("BackendTimeout") }
}

// WithFailOpen runs the handler without a lease when the backend fails.
func WithFailOpen(open bool) Option { return func(s *settings.Settings) { s.FailOpen = open } }

// WithLockOptions passes options to lock.Do.
func WithLockOptions(opts ...lock.Option) Option {
	return func(s *settings.Settings) { s.LockOptions = append(s.LockOptions, opts...) }
}

// WithRouteScope sets whether keys include the method and route pattern.
func WithRouteScope(on bool) Option {
	return func(s *settings.Settings) {
		s.RouteScope = settings.RouteOff
		if on {
			s.RouteScope = settings.RouteOn
		}
	}
}

// Unscoped says that replay runs without a scope, for public endpoints.
func Unscoped() Option { return func(s *settings.Settings) { s.Unscoped = true } }

// WithProblemTypeBase makes the default answers' problem types uri
// followed by their names.
func WithProblemTypeBase(uri string) Option {
	return func(s *settings.Settings) { s.ProblemBase = uri }
}

// WithLimit makes the key a concurrency limit of n slots: the rest get
// 429. It needs a lock.IDBackend.
func WithLimit(n int) Option {
	return func(s *settings.Settings) { s.Limit = n; s.Mark("Limit") }
}

// WithReplay turns replay mode on: the first response to a key is stored
// for ttl and replayed to retries. See docs/http.md.
func WithReplay(ttl time.Duration) Option {
	return func(s *settings.Settings) { s.ReplayOn, s.Replay.TTL = true, ttl; s.Mark("Replay.TTL") }
}

// WithReplayStatuses sets which statuses are stored.
func WithReplayStatuses(store func(status int) bool) Option {
	return tune("Replay.Statuses", func(r *settings.Replay) { r.Statuses = store })
}

// WithReplayHeaders sets the response headers stored and replayed.
func WithReplayHeaders(names ...string) Option {
	names = append([]string{}, names...)
	return tune("Replay.Headers", func(r *settings.Replay) { r.Headers = names })
}

// WithReplayMaxBody sets the largest response body stored.
func WithReplayMaxBody(n int64) Option {
	return tune("Replay.MaxBody", func(r *settings.Replay) { r.MaxBody = n })
}

// WithReplayMaxRequestBody sets the largest request body accepted.
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
