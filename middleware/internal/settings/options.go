package settings

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Set is what one option does to Settings. Every adapter's option
// constructors (WithTTL, WithReplay, ...) are thin functions that return
// their adapter's Option over a Set declared here, so what an option
// means is written once for every adapter.
type Set func(*Settings)

// Apply runs the options opts on c in order, skipping nil ones: the
// first step of every options-style adapter's constructor.
func Apply[C any, O ~func(*C)](c *C, opts []O) {
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
}

// Prefix prepends ns verbatim to every key.
func Prefix(ns string) Set { return func(s *Settings) { s.Prefix = ns } }

// LeaseTTL sets the lease duration.
func LeaseTTL(d time.Duration) Set { return func(s *Settings) { s.TTL = d; s.Mark("TTL") } }

// WaitFor sets how long a request waits for a busy key.
func WaitFor(d time.Duration) Set { return func(s *Settings) { s.Wait = d } }

// Timeout bounds each call to the backend.
func Timeout(d time.Duration) Set {
	return func(s *Settings) { s.BackendTimeout = d; s.Mark("BackendTimeout") }
}

// Open runs the handler without a lease when the backend fails.
func Open(open bool) Set { return func(s *Settings) { s.FailOpen = open } }

// Lock passes options to lock.Do.
func Lock(opts ...lock.Option) Set {
	return func(s *Settings) { s.LockOptions = append(s.LockOptions, opts...) }
}

// Routes sets whether keys include the method and route pattern.
func Routes(on bool) Set {
	return func(s *Settings) {
		s.RouteScope = RouteOff
		if on {
			s.RouteScope = RouteOn
		}
	}
}

// NoScope says that replay runs without a scope.
func NoScope() Set { return func(s *Settings) { s.Unscoped = true } }

// Problems makes the default answers' problem types uri followed by
// their names.
func Problems(uri string) Set { return func(s *Settings) { s.ProblemBase = uri } }

// Slots makes the key a concurrency limit of n slots.
func Slots(n int) Set { return func(s *Settings) { s.Limit = n; s.Mark("Limit") } }

// ReplayFor turns replay mode on, storing first responses for ttl.
func ReplayFor(ttl time.Duration) Set {
	return func(s *Settings) { s.ReplayOn, s.Replay.TTL = true, ttl; s.Mark("Replay.TTL") }
}

// ReplayStatuses sets which HTTP statuses are stored.
func ReplayStatuses(store func(status int) bool) Set {
	return Tune("Replay.Statuses", func(r *Replay) { r.Statuses = store })
}

// ReplayHeaders sets the response headers stored and replayed.
func ReplayHeaders(names ...string) Set {
	names = append([]string{}, names...)
	return Tune("Replay.Headers", func(r *Replay) { r.Headers = names })
}

// ReplayMaxBody sets the largest response body stored.
func ReplayMaxBody(n int64) Set {
	return Tune("Replay.MaxBody", func(r *Replay) { r.MaxBody = n })
}

// ReplayMaxRequestBody sets the largest request body accepted.
func ReplayMaxRequestBody(n int64) Set {
	return Tune("Replay.MaxRequestBody", func(r *Replay) { r.MaxRequestBody = n })
}

// Tune is the replay option named name (an error without replay names
// it), which runs r on the replay settings.
func Tune(name string, r func(*Replay)) Set {
	return func(s *Settings) {
		r(&s.Replay)
		s.Tuned = name
	}
}

// Scoped records that a scope function was given.
func Scoped(given bool) Set { return func(s *Settings) { s.HasScope = given } }

// Tuned records a replay option that takes an adapter's function, such
// as a fingerprint: an error without replay names it.
func Tuned(name string) Set { return func(s *Settings) { s.Tuned = name } }
