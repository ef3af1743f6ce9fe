package lock

import (
	"context"
	"time"
)

// Settings are what a list of options sets, defaults filled in.
type Settings struct {
	TTL            time.Duration // WithTTL's
	Wait           time.Duration // WithWait's
	Retry          Retry         // WithRetry's, defaults filled in
	ReleaseTimeout time.Duration // WithReleaseTimeout's
	BackendTimeout time.Duration // WithBackendTimeout's; 0: none
	Heartbeat      Heartbeat     // WithHeartbeat's
	Limit          int           // WithLimit's n; 0 without WithLimit

	OnReleaseError func(Lease, error)                        // WithReleaseErrorHandler's; never nil
	ReleaseFunc    func(context.Context, Lease, error) error // WithReleaseFunc's; nil without it
	Lease          *Lease                                    // WithLease's; nil without it
	Watched        bool                                      // WithWatch was given
}

// Resolve returns the settings of opts, or the InvalidArgument error
// Acquire, Do and Hold return for them on b. A nil b is not checked.
func Resolve(b Backend, opts ...Option) (Settings, error) {
	c, err := newConfig(opts)
	if err != nil {
		return Settings{}, err
	}
	if _, ok := b.(IDBackend); c.limitSet && !ok && b != nil {
		e := errNoLimits()
		e.Op = "config"
		return Settings{}, e
	}
	return Settings{TTL: c.ttl, Wait: c.wait, Retry: c.retry, ReleaseTimeout: c.releaseTimeout,
		BackendTimeout: c.backendTimeout, Heartbeat: c.heartbeat, Limit: int(c.limit),
		OnReleaseError: c.onReleaseError, ReleaseFunc: c.release, Lease: c.lease, Watched: c.watch != nil}, nil
}
