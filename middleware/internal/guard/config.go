package guard

import (
	"math"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
)

// Defaults of the middleware.
const (
	// DefaultTTL is the lease duration when none is set. The lease is kept
	// alive while the handler runs, so it bounds how long a crashed
	// instance blocks the key, not how long a handler may take.
	DefaultTTL = lock.DefaultTTL
	// MinTTL is the shortest lease accepted: the backend counts in
	// milliseconds and the heartbeat runs every TTL/3.
	MinTTL = 3 * time.Millisecond
	// WaitBaseDelay is the first pause between attempts when waiting.
	WaitBaseDelay = 10 * time.Millisecond
	// WaitMaxDelay caps a pause between attempts when waiting, so a
	// released key is taken within about this long.
	WaitMaxDelay = 50 * time.Millisecond
)

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
	FailOpen bool
	// LockOptions are appended to the options given to lock.Do, so they
	// override the middleware's.
	LockOptions []lock.Option
	// Unscoped leaves the route out of lock keys, so every route under
	// the prefix shares one key space (see [Guard.Key]).
	Unscoped bool
	// Replay, when not nil, turns replay mode on (see [Guard.Serve]); the
	// backend must then be a lock.Recorder.
	Replay *ReplayConfig
	// Limit, when not 0, makes the key a concurrency limit: at most Limit
	// requests (1 to lock.MaxLimit) hold it at once, each with a slot of
	// its own (lock.WithLimit, given after LockOptions so it wins), and a
	// request that finds every slot taken gets ErrLimitReached. The
	// backend must then be a lock.Limiter, and Replay must be nil.
	Limit int
}

// Guard runs handlers under per-request locks. It is safe for concurrent
// use.
type Guard struct {
	b        lock.Backend
	prefix   string
	ttl      time.Duration
	failOpen bool
	scoped   bool
	opts     []lock.Option
	holds    holdTimes
	replay   *replay // nil: replay mode off
	limit    int     // 0: no limit
}

// New validates c and returns a Guard on b. Errors are *lock.Error values
// with lock.CodeInvalidArgument and Op "config"; with c.Replay, also when b
// is not a lock.Recorder or the replay settings are bad; with c.Limit, also
// when it is out of range, b is not a lock.Limiter (the error then matches
// errors.ErrUnsupported) or c.Replay is set.
func New(b lock.Backend, c Config) (*Guard, error) {
	switch {
	case b == nil:
		return nil, lock.InvalidArgument("config", "nil lock backend")
	case c.TTL < 0:
		return nil, lock.InvalidArgument("config", "TTL must not be negative")
	case c.TTL > 0 && c.TTL < MinTTL:
		return nil, lock.InvalidArgument("config", "TTL must be at least "+MinTTL.String())
	case c.Wait < 0:
		return nil, lock.InvalidArgument("config", "wait must not be negative")
	case !utf8.ValidString(c.Prefix):
		return nil, lock.InvalidArgument("config", "prefix must be valid UTF-8")
	case len(c.Prefix) >= lock.MaxKeyBytes:
		return nil, lock.InvalidArgument("config", "prefix leaves no room for a key")
	}
	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	opts := []lock.Option{lock.WithTTL(ttl), lock.WithWait(c.Wait)}
	if c.Wait > 0 {
		// lock.Do's defaults (10 retries, exponential from 100ms) would give
		// up long before a multi-second wait is over, and would leave a
		// released key idle for up to seconds. Retry until the wait ends,
		// at most WaitMaxDelay apart.
		opts = append(opts,
			lock.WithMaxRetries(math.MaxInt32),
			lock.WithBaseDelay(WaitBaseDelay),
			lock.WithMaxDelay(WaitMaxDelay))
	}
	opts = append(opts, c.LockOptions...)
	if c.Limit != 0 {
		opts = append(opts, lock.WithLimit(c.Limit))
	}
	if err := lock.ValidateOptions(opts...); err != nil {
		return nil, err
	}
	if err := checkLimit(b, c); err != nil {
		return nil, err
	}
	g := &Guard{b: b, prefix: c.Prefix, ttl: ttl, failOpen: c.FailOpen, scoped: !c.Unscoped, opts: opts, limit: c.Limit}
	if c.Replay != nil {
		rp, err := newReplay(b, *c.Replay)
		if err != nil {
			return nil, err
		}
		g.replay = rp
	}
	return g, nil
}

// TTL returns the lease duration in use.
func (g *Guard) TTL() time.Duration { return g.ttl }

// Limit returns the concurrency limit of the key, 0 when there is none.
func (g *Guard) Limit() int { return g.limit }

// Replays reports whether replay mode is on.
func (g *Guard) Replays() bool { return g.replay != nil }
