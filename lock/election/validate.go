package election

import (
	"context"
	"math"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Validate returns the error Lead returns before any I/O for b, key,
// identity and opts, or nil: a *lock.Error with lock.CodeInvalidArgument.
// An adapter that runs Lead later calls it when it is built.
func Validate(b lock.Backend, key, identity string, opts ...lock.Option) error {
	_, err := validateLead(context.Background(), b, key, identity, noop, opts)
	return err
}

func noop(context.Context, lock.Lease) error { return nil }

// validate checks the arguments every function takes, before any I/O.
func validate(op string, ctx context.Context, b lock.Backend, key string) error {
	switch {
	case ctx == nil:
		return lockdriver.InvalidArgument(op, "context is nil")
	case b == nil:
		return lockdriver.InvalidArgument(op, "backend is nil")
	case key == "":
		return lockdriver.InvalidArgument(op, "key is empty")
	}
	if _, err := lockdriver.NormalizeKey(key); err != nil {
		return err
	}
	return nil
}

// validateLead checks Lead's arguments before any I/O and returns the
// settings of opts.
func validateLead(ctx context.Context, b lock.Backend, key, identity string, fn func(context.Context, lock.Lease) error, opts []lock.Option) (lock.Settings, error) {
	const op = "lead"
	if err := validate(op, ctx, b, key); err != nil {
		return lock.Settings{}, err
	}
	switch {
	case identity == "":
		return lock.Settings{}, lockdriver.InvalidArgument(op, "identity is empty")
	case len(identity) > MaxIdentityBytes || !utf8.ValidString(identity):
		return lock.Settings{}, lockdriver.InvalidArgument(op, "identity must be valid UTF-8 of at most 256 bytes")
	case fn == nil:
		return lock.Settings{}, lockdriver.InvalidArgument(op, "fn is nil")
	}
	return resolve(op, opts)
}

// unset is a value no caller gives: resolve puts the options Lead refuses
// with it before the caller's, so that another value tells one was given.
const unset = time.Duration(math.MaxInt64 - 1)

var (
	unsetRetry = lock.Retry{MaxRetries: math.MaxInt - 1, BaseDelay: unset, MaxDelay: unset, Fixed: true, NoJitter: true}
	unsetOpts  = []lock.Option{lock.WithWait(unset), lock.WithReleaseTimeout(unset), lock.WithRetry(unsetRetry)}
)

// resolve returns the settings of Lead's options, or the error for one
// it refuses or a bad value.
func resolve(op string, opts []lock.Option) (lock.Settings, error) {
	s, err := lock.Resolve(nil, append(unsetOpts[:len(unsetOpts):len(unsetOpts)], opts...)...)
	if err != nil {
		return s, err
	}
	interval := s.Heartbeat.Interval
	if interval == 0 {
		interval = s.TTL / 3
	}
	var msg string
	switch {
	case s.Limit > 0:
		msg = "lock.WithLimit does not apply to an election: a term has one leader"
	case s.Wait != unset || s.Retry != unsetRetry:
		msg = "lock.WithWait and lock.WithRetry do not apply to an election: a candidate waits until its context ends"
	case s.BackendTimeout != 0:
		msg = "lock.WithBackendTimeout does not apply to an election: a candidate campaigns through a silent backend until its context ends"
	case s.ReleaseTimeout != unset:
		msg = "lock.WithReleaseTimeout does not apply to an election: Lead bounds its own stop"
	case s.TTL < MinTTL:
		msg = "ttl must be at least 1s (election.MinTTL): a shorter term cannot be kept alive"
	case interval < 0 || interval > s.TTL/2:
		msg = "heartbeat interval must be at most half the ttl, so that one failed extension does not lose the term"
	default:
		return s, nil
	}
	return s, lockdriver.InvalidArgument(op, msg)
}
