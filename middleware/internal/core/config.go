package core

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// untilWaitEnds is the retry schedule of a wait: lock.Do's default gives
// up long before a multi-second wait ends. A queued waiter is handed the
// key and attempts only as a fallback.
var untilWaitEnds = lock.Retry{MaxRetries: math.MaxInt32, BaseDelay: 10 * time.Millisecond, MaxDelay: guard.WaitMaxDelay}

// Guard runs handlers under per-request locks. It is safe for concurrent
// use.
type Guard struct {
	b           lock.Backend
	prefix      string
	ttl         time.Duration
	failOpen    bool
	timeout     time.Duration // each backend call's bound
	route       bool          // the route goes into keys
	scoped      bool          // Exchange.Scope goes into keys
	opts        []lock.Option
	holds       holdTimes
	replay      *replay // nil: replay mode off
	limit       int     // 0: no limit
	problemBase string
}

// New checks s and returns a Guard on b. Every error is a *lock.Error
// with lock.CodeInvalidArgument naming the option or field at fault (a
// limit on a backend without limits also matches errors.ErrUnsupported);
// nothing reaches b.
func New(b lock.Backend, s settings.Settings) (*Guard, error) {
	if err := check(b, &s); err != nil {
		return nil, err
	}
	ttl := s.TTL
	if ttl == 0 {
		ttl = guard.DefaultTTL
	}
	timeout := cmp.Or(s.BackendTimeout, guard.DefaultBackendTimeout)
	// The release's bound comes first, so that LockOptions can change it;
	// the middleware's own settings come last, so they win.
	opts := append([]lock.Option{lock.WithReleaseTimeout(timeout)}, s.LockOptions...)
	opts = append(opts, lock.WithTTL(ttl), lock.WithWait(s.Wait), lock.WithBackendTimeout(timeout))
	if s.Wait > 0 {
		opts = append(opts, lock.WithRetry(untilWaitEnds))
	}
	if s.Limit != 0 {
		opts = append(opts, lock.WithLimit(s.Limit))
	}
	if err := lockdriver.ValidateOptions(opts...); err != nil {
		return nil, s.Wrap("LockOptions", err)
	}
	if s.Limit != 0 {
		if err := lockdriver.ValidateLimit(b, s.Limit); err != nil {
			return nil, s.Wrap("Limit", err)
		}
	}
	route := s.RouteScope == settings.RouteOn || (s.RouteScope == settings.RouteDefault && s.Limit == 0)
	g := &Guard{b: b, prefix: s.Prefix, ttl: ttl, failOpen: s.FailOpen, timeout: timeout, route: route, scoped: s.HasScope,
		opts: opts, limit: s.Limit, problemBase: s.ProblemBase}
	if s.ReplayOn {
		rp, err := newReplay(b, &s)
		if err != nil {
			return nil, err
		}
		g.replay = rp
	}
	return g, nil
}

// check refuses a bad configuration: the checks every adapter shares.
func check(b lock.Backend, s *settings.Settings) error {
	switch {
	case b == nil:
		return s.Invalid("Backend", "nil lock backend")
	case !s.HasKey:
		return s.Invalid("Key", "no key function")
	case s.Set["TTL"] && s.TTL == 0:
		return s.Invalid("TTL", "must be positive (leave it out for the default, "+guard.DefaultTTL.String()+")")
	case s.TTL < 0, s.TTL > 0 && s.TTL < guard.MinTTL:
		return s.Invalid("TTL", "must be at least "+guard.MinTTL.String())
	case s.Wait < 0:
		return s.Invalid("Wait", "must not be negative")
	case s.Set["BackendTimeout"] && s.BackendTimeout == 0, s.BackendTimeout < 0:
		return s.Invalid("BackendTimeout", "must be positive (leave it out for the default, "+guard.DefaultBackendTimeout.String()+")")
	case !utf8.ValidString(s.Prefix):
		return s.Invalid("Prefix", "must be valid UTF-8")
	case len(s.Prefix) >= lockdriver.MaxKeyBytes:
		return s.Invalid("Prefix", "leaves no room for a key")
	case s.RouteScope < settings.RouteDefault || s.RouteScope > settings.RouteOff:
		return s.Invalid("RouteScope", "unknown value")
	case s.Set["Limit"] && s.Limit == 0, s.Limit < 0, s.Limit > lockdriver.MaxLimit:
		return s.Invalid("Limit", "must be between 1 and "+strconv.Itoa(lockdriver.MaxLimit)+" (leave it out for no limit)")
	case s.Limit != 0 && s.ReplayOn:
		return s.Invalid("Limit", "cannot be combined with replay: replay runs a key once, a limit lets several run at once")
	case s.HasScope && s.Unscoped:
		return s.Invalid("Unscoped", "a scope is set too; set one")
	case s.ProblemBase != "" && !absoluteHTTP(s.ProblemBase):
		return s.Invalid("ProblemBase", fmt.Sprintf("%q is not an absolute http(s) URI", s.ProblemBase))
	}
	return checkReplay(s)
}

// checkReplay refuses replay settings without replay, and replay without
// a scope decision or with fail-open.
func checkReplay(s *settings.Settings) error {
	switch {
	case !s.ReplayOn && s.Tuned != "":
		return s.Invalid(s.Tuned, "needs "+s.Name("Replay"))
	case !s.ReplayOn:
		return nil
	case s.Set["Replay.TTL"] && s.Replay.TTL == 0:
		return s.Invalid("Replay.TTL", "the replay TTL must be positive (guard.DefaultReplayTTL is 24h)")
	case s.FailOpen:
		return s.Invalid("FailOpen", "replay cannot fail open: a request let through without a lock stores no response, so its retry would run again")
	case !s.HasScope && !s.Unscoped:
		return s.Invalid("Scope", "replay needs a scope, the authenticated principal whose requests share keys, "+
			"from your authentication middleware, never a header the client chooses; for a public endpoint say "+s.Name("Unscoped"))
	}
	return nil
}

func absoluteHTTP(base string) bool {
	u, err := url.Parse(base)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// TTL returns the lease duration in use.
func (g *Guard) TTL() time.Duration { return g.ttl }

// Limit returns the concurrency limit of the key, 0 when there is none.
func (g *Guard) Limit() int { return g.limit }

// Replays reports whether replay mode is on.
func (g *Guard) Replays() bool { return g.replay != nil }

// ReplayMax returns the largest response and request bodies replay mode
// stores and reads; zeros when it is off.
func (g *Guard) ReplayMax() (body, requestBody int64) {
	if g.replay == nil {
		return 0, 0
	}
	return g.replay.maxBody, g.replay.maxReqBody
}
