package httplock

import (
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// Defaults.
const (
	// DefaultTTL is the lease duration when WithTTL is not given.
	DefaultTTL = guard.DefaultTTL
	// WaitMaxDelay is the longest pause between attempts while waiting for
	// a busy key (see WithWait).
	WaitMaxDelay = guard.WaitMaxDelay
)

// KeyFunc derives the lock key from a request. An error, or an empty key,
// makes the middleware answer 400 without calling the backend.
type KeyFunc func(*http.Request) (string, error)

// BusyHandler answers a request whose key is held by someone else, or,
// with WithLimit, whose key's slots are all taken. retryAfter is a whole
// number of seconds, at least one: the time until the holder's lease
// expires (for a limit, the earliest expiry among the holders; the TTL
// when that is unknown), capped by the moving average of how long this
// route's handlers held the lock; err matches lock.ErrLocked (and
// lock.CodeAcquisitionTimeout after a wait), and ErrLimitReached when the
// limit is reached.
type BusyHandler func(w http.ResponseWriter, r *http.Request, retryAfter time.Duration, err error)

// ErrorHandler answers a request that could not be locked for a reason
// other than a busy key. lock.CodeOf(err) tells the cases apart:
// lock.CodeInvalidArgument for a missing or invalid key (no backend call
// was made), lock.CodeAborted when the request's context ended while
// waiting, and the backend's codes (such as lock.CodeServiceUnavailable)
// otherwise. With WithReplay, err may also match ErrKeyReused,
// ErrRequestTooLarge, ErrRequestBody, ErrFingerprint or ErrBadRecord
// (lock.CodeOf is then "").
type ErrorHandler func(w http.ResponseWriter, r *http.Request, err error)

// Option configures the middleware built by New.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	guard       guard.Config
	ttlSet      bool // WithTTL was given: 0 is then an error, not the default
	limitSet    bool // WithLimit was given: 0 is then an error, not "no limit"
	routeScope  *bool
	keyFunc     KeyFunc
	scope       ScopeFunc
	problemBase string
	busy        BusyHandler
	onError     ErrorHandler
	skipper     func(*http.Request) bool
	replay      guard.ReplayConfig
	replayOn    bool   // WithReplay was given
	replayTuned string // the name of a replay option given, for the error without WithReplay
	fingerprint FingerprintFunc
}

func newConfig(opts []Option) config {
	c := config{busy: DefaultBusyHandler, onError: DefaultErrorHandler}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// WithKeyFunc sets how the lock key is read from a request (required). See
// FromHeader, FromPathValue and Compose.
func WithKeyFunc(f KeyFunc) Option {
	return optionFunc(func(c *config) { c.keyFunc = f })
}

// WithPrefix sets a namespace prepended verbatim to every key, such as
// "orders:", so that middleware sharing a backend does not share keys.
// The prefix counts toward the 512-byte key limit.
func WithPrefix(ns string) Option {
	return optionFunc(func(c *config) { c.guard.Prefix = ns })
}

// WithTTL sets the lease duration (default DefaultTTL, 30s; at least 3ms).
// As with lock.WithTTL, 0 is an InvalidArgument error from New; leave the
// option out for the default. The lease is kept alive while the handler
// runs, so the TTL bounds how long a crashed instance blocks the key, not
// how long a handler may take.
func WithTTL(d time.Duration) Option {
	return optionFunc(func(c *config) { c.guard.TTL, c.ttlSet = d, true })
}

// WithWait sets how long a request waits for a busy key (or a free slot,
// with WithLimit) before it is answered 409 (429): lock.WithWait, with a default of 0 here (a single attempt)
// so that a busy key is answered at once. While waiting, on a backend with
// a waiter queue (redisbackend) the request is handed the key by the
// release, in the order requests queued, and attempts again only as a
// fallback (at the holder's expiry, or lockdriver.QueuedPollInterval after its
// last attempt); on other backends it retries at most WaitMaxDelay apart
// (from 10ms, doubling, with jitter). The wait ends early when the
// request's context does.
func WithWait(d time.Duration) Option {
	return optionFunc(func(c *config) { c.guard.Wait = d })
}

// WithBusyHandler replaces the answer to a busy key (default
// DefaultBusyHandler).
func WithBusyHandler(h BusyHandler) Option {
	return optionFunc(func(c *config) { c.busy = h })
}

// WithErrorHandler replaces the answer to an invalid key or a backend
// failure (default DefaultErrorHandler).
func WithErrorHandler(h ErrorHandler) Option {
	return optionFunc(func(c *config) { c.onError = h })
}

// WithFailOpen makes a backend failure run the handler anyway, without a
// lease (lock.LeaseFrom reports false), instead of answering 503. The default
// is fail-closed. Busy and invalid keys are answered as usual. It cannot be
// combined with WithReplay (New returns an error): a request let through
// without a lease stores no response, so its retry would run the handler
// again.
func WithFailOpen(open bool) Option {
	return optionFunc(func(c *config) { c.guard.FailOpen = open })
}

// WithSkipper sets a function that, when it returns true, sends the
// request to the handler without a lock.
func WithSkipper(f func(*http.Request) bool) Option {
	return optionFunc(func(c *config) { c.skipper = f })
}

// ScopeFunc returns the scope of a request: the authenticated principal
// (user id, tenant id, API key id) that its keys belong to, as the
// authentication middleware in front established it. An error, or "",
// is answered 401 (ErrScope) without calling the backend.
type ScopeFunc func(*http.Request) (string, error)

// WithScope puts the request's principal into every lock key (and so
// every replay record's key), escaped as a Compose part: two principals
// that send the same key never share a lock or a stored response, and
// neither can take the other's key. Replay mode needs it, or Unscoped.
// Take the principal from your authentication middleware (a context
// value it sets), never from a header the client chooses:
//
//	httplock.WithScope(func(r *http.Request) (string, error) {
//		u, ok := auth.UserFrom(r.Context()) // set by the auth middleware in front
//		if !ok {
//			return "", errors.New("not authenticated")
//		}
//		return u.ID, nil
//	})
//
// It works the same with limits (the limit is then per principal and key)
// and plain locks.
func WithScope(f ScopeFunc) Option {
	return optionFunc(func(c *config) { c.scope = f })
}

// Unscoped says that replay mode runs without a scope: every client that
// sends a key is served the response stored for it. Use it for public
// endpoints only, where keys are not secrets and responses belong to no
// one; elsewhere use WithScope. New rejects WithReplay with neither, and
// Unscoped with WithScope.
func Unscoped() Option {
	return optionFunc(func(c *config) { c.guard.Unscoped = true })
}

// WithProblemTypeBase sets the base URI of the problem types of the
// default answers, such as "https://example.com/problems/": each type is
// then the base followed by its name ("lock-busy", ...), a document the
// client can read, instead of a URN (urn:syncguard:problem:lock-busy). It
// must be an absolute http(s) URI.
func WithProblemTypeBase(uri string) Option {
	return optionFunc(func(c *config) { c.problemBase = uri })
}

// WithLockOptions passes options to lock.Do, such as
// lock.WithReleaseErrorHandler, lock.WithReleaseTimeout or
// lock.WithHeartbeat. The middleware's own settings win over them: the
// TTL (WithTTL) and the wait and its retry schedule (WithWait) are set by
// those options only, so lock.WithTTL, lock.WithWait or lock.WithRetry
// given here are overridden; set a limit with WithLimit, not
// lock.WithLimit (see WithLimit).
func WithLockOptions(opts ...lock.Option) Option {
	return optionFunc(func(c *config) { c.guard.LockOptions = append(c.guard.LockOptions, opts...) })
}
