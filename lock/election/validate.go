package election

import (
	"context"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Validate returns the error Lead returns before any I/O for b, key,
// identity and opts, or nil: a *lock.Error with lock.CodeInvalidArgument.
// An adapter that runs Lead later calls it when it is built.
func Validate(b lock.Backend, key, identity string, opts ...Option) error {
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

// validateLead checks Lead's arguments before any I/O and returns what
// opts set.
func validateLead(ctx context.Context, b lock.Backend, key, identity string, fn func(context.Context, lock.Lease) error, opts []Option) (config, error) {
	const op = "lead"
	if err := validate(op, ctx, b, key); err != nil {
		return config{}, err
	}
	switch {
	case identity == "":
		return config{}, lockdriver.InvalidArgument(op, "identity is empty")
	case len(identity) > MaxIdentityBytes || !utf8.ValidString(identity):
		return config{}, lockdriver.InvalidArgument(op, "identity must be valid UTF-8 of at most 256 bytes")
	case fn == nil:
		return config{}, lockdriver.InvalidArgument(op, "fn is nil")
	}
	c := newConfig(opts)
	return c, c.check(op)
}
