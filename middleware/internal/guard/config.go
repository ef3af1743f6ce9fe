package guard

import (
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Defaults of the middleware.
const (
	// DefaultTTL is the lease duration when none is set. The lease is kept
	// alive while the handler runs, so it bounds how long a crashed
	// instance blocks the key, not how long a handler may take.
	DefaultTTL = lockdriver.DefaultTTL
	// MinTTL is the shortest lease accepted: the backend counts in
	// milliseconds and the heartbeat runs every TTL/3.
	MinTTL = 3 * time.Millisecond
	// WaitBaseDelay is the first pause between attempts when waiting.
	WaitBaseDelay = 10 * time.Millisecond
	// WaitMaxDelay caps a pause between attempts when waiting, so a
	// released key is taken within about this long.
	WaitMaxDelay = 50 * time.Millisecond
)

// untilWaitEnds is the retry schedule of a wait. lock.Do's default (10
// retries, exponential from 100ms) would give up long before a
// multi-second wait is over, and would leave a released key idle for up
// to seconds on a backend without a waiter queue. This one retries until
// the wait ends, at most WaitMaxDelay apart there; a queued waiter is
// handed the key and attempts only as a fallback (lockdriver.QueuedPollInterval).
var untilWaitEnds = lock.Retry{MaxRetries: math.MaxInt32, BaseDelay: WaitBaseDelay, MaxDelay: WaitMaxDelay}

// Config is the adapter-neutral configuration.
type Config struct {
	// Prefix is prepended verbatim to every request key.
	Prefix string
	// TTL is the lease duration; 0 means DefaultTTL.
	TTL time.Duration
	// Wait bounds the time spent waiting for a busy key; 0 means one
	// attempt.
	Wait time.Duration
	// FailOpen runs the handler without a lease when the backend fails.
	// It cannot be combined with Replay: a request let through without a
	// lease stores nothing, so its retry would run the handler again.
	FailOpen bool
	// LockOptions are given to lock.Do before the middleware's own, which
	// win: TTL, wait, the retry schedule of a wait and the limit are the
	// middleware's settings.
	LockOptions []lock.Option
	// NoRoute leaves the route out of lock keys, so every route under
	// the prefix shares one key space (see [Guard.Key]).
	NoRoute bool
	// Scoped says that the adapter gives every request's scope, the
	// authenticated principal, in Exchange.Scope: it goes into the key
	// (see [Guard.Key]), so two principals never share a key.
	Scoped bool
	// Unscoped is the explicit opt-out of a scope in replay mode, for a
	// public endpoint where any client may be served any key's response.
	// Replay mode needs Scoped or Unscoped; both at once are an error.
	Unscoped bool
	// Replay, when not nil, turns replay mode on (see [Guard.Serve]); the
	// backend must then be a lock.Recorder.
	Replay *ReplayConfig
	// Limit, when not 0, makes the key a concurrency limit: at most Limit
	// requests (1 to lockdriver.MaxLimit) hold it at once, each with a slot of
	// its own (lock.WithLimit, given after LockOptions so it wins), and a
	// request that finds every slot taken gets ErrLimitReached. The
	// backend must then be a lock.IDBackend, and Replay must be nil.
	Limit int
}

// Guard runs handlers under per-request locks. It is safe for concurrent
// use.
type Guard struct {
	b        lock.Backend
	prefix   string
	ttl      time.Duration
	failOpen bool
	route    bool // the route goes into keys
	scoped   bool // Exchange.Scope goes into keys
	opts     []lock.Option
	holds    holdTimes
	replay   *replay // nil: replay mode off
	limit    int     // 0: no limit
}

// New validates c and returns a Guard on b. Errors are *lock.Error values
// with lock.CodeInvalidArgument and Op "config"; with c.Replay, also when b
// is not a lock.Recorder, the replay settings are bad, c has neither Scoped
// nor Unscoped, or c.FailOpen is set; with c.Limit, also when it is out of
// range, b is not a lock.IDBackend (the error then matches
// errors.ErrUnsupported) or c.Replay is set; and when c sets both Scoped
// and Unscoped.
func New(b lock.Backend, c Config) (*Guard, error) {
	switch {
	case b == nil:
		return nil, lockdriver.InvalidArgument("config", "nil lock backend")
	case c.TTL < 0:
		return nil, lockdriver.InvalidArgument("config", "TTL must not be negative")
	case c.TTL > 0 && c.TTL < MinTTL:
		return nil, lockdriver.InvalidArgument("config", "TTL must be at least "+MinTTL.String())
	case c.Wait < 0:
		return nil, lockdriver.InvalidArgument("config", "wait must not be negative")
	case !utf8.ValidString(c.Prefix):
		return nil, lockdriver.InvalidArgument("config", "prefix must be valid UTF-8")
	case len(c.Prefix) >= lockdriver.MaxKeyBytes:
		return nil, lockdriver.InvalidArgument("config", "prefix leaves no room for a key")
	}
	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	// The middleware's own settings come after LockOptions, so they win:
	// TTL, wait, retry schedule and limit are set one way only.
	opts := append(slices.Clone(c.LockOptions), lock.WithTTL(ttl), lock.WithWait(c.Wait))
	if c.Wait > 0 {
		// As a whole, so no lock.WithRetry in LockOptions mixes in.
		opts = append(opts, lock.WithRetry(untilWaitEnds))
	}
	if c.Limit != 0 {
		opts = append(opts, lock.WithLimit(c.Limit))
	}
	if err := lockdriver.ValidateOptions(opts...); err != nil {
		return nil, err
	}
	if err := checkLimit(b, c); err != nil {
		return nil, err
	}
	g := &Guard{b: b, prefix: c.Prefix, ttl: ttl, failOpen: c.FailOpen, route: !c.NoRoute, scoped: c.Scoped, opts: opts, limit: c.Limit}
	if c.Replay != nil {
		rp, err := newReplay(b, *c.Replay)
		if err != nil {
			return nil, err
		}
		g.replay = rp
	}
	if err := checkScope(c); err != nil {
		return nil, err
	}
	return g, nil
}

// checkScope validates the scope part of c: replay mode stores responses
// that any request with the same key is served, so it needs to know whose
// keys they are (Scoped), or to be told that the endpoint is public
// (Unscoped); and it cannot fail open, which would run a handler with no
// lease and store nothing.
func checkScope(c Config) error {
	switch {
	case c.Scoped && c.Unscoped:
		return lockdriver.InvalidArgument("config", "a scope and Unscoped are both set; set one")
	case c.Replay == nil:
		return nil
	case c.FailOpen:
		return lockdriver.InvalidArgument("config",
			"replay mode cannot fail open: a request let through without a lock stores no response, so its retry would run the handler a second time")
	case !c.Scoped && !c.Unscoped:
		return lockdriver.InvalidArgument("config",
			"replay mode needs a scope, the authenticated principal (user, tenant or API key id) whose requests share idempotency keys, "+
				"taken from your authentication middleware, never from a header the client chooses: httplock.WithScope or echolock Config.Scope; "+
				"for a public endpoint where any client may be served any key's response, say so with httplock.Unscoped() or echolock Config.Unscoped")
	}
	return nil
}

// TTL returns the lease duration in use.
func (g *Guard) TTL() time.Duration { return g.ttl }

// Limit returns the concurrency limit of the key, 0 when there is none.
func (g *Guard) Limit() int { return g.limit }

// Replays reports whether replay mode is on.
func (g *Guard) Replays() bool { return g.replay != nil }
