package asynqlock

import (
	"context"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// DefaultLimitPrefix namespaces every key of a Guard built with WithLimit
// unless WithPrefix says otherwise. It differs from DefaultPrefix so that a
// limit key (a task type, by default) never meets the lock key of a
// deduplicating Guard on the same backend: a key is used either as a lock
// or as a limit (see lock.ErrKindMismatch).
const DefaultLimitPrefix = "asynq-limit:"

// WithLimit makes the Guard a concurrency limit: at most n tasks with the
// same key (the task type, unless WithKeyFunc) run at once, each under a
// fenced slot (lock.WithLimit); a task that finds every slot taken waits
// (WithLimitWait), then its policy applies (*LimitError). n is 1 to 10000,
// the backend a lock.IDBackend, and not with WithDoneTTL; see docs/asynq.md.
func WithLimit(n int) Option {
	return optionFunc(func(c *config) { c.limit, c.limitSet = n, true })
}

// DefaultLimitWait is how long a task waits for a slot of its full limit
// when WithLimitWait is not given.
const DefaultLimitWait = 5 * time.Second

// WithLimitWait sets how long a task whose limit is full waits for a slot
// (default DefaultLimitWait; 0: none), in the backend's queue, so a freed
// slot goes straight to the oldest waiting task; at most half the time left
// before the task's deadline. d must not be negative, and needs WithLimit;
// docs/asynq.md says why waiting beats asynq's retries.
func WithLimitWait(d time.Duration) Option {
	return optionFunc(func(c *config) { c.limitWait, c.waitSet = d, true })
}

// TypeKey is the default KeyFunc of a Guard built with WithLimit: the task
// type, so that the limit counts the running tasks of each type. A type
// that is not valid UTF-8 already in NFC, begins with "h:" or is longer
// than lockdriver.MaxKeyBytes-MaxPrefixBytes bytes is hashed ("h:" and its hex
// SHA-256), as DefaultKeyIn does, so that distinct types never share a
// limit and the key is valid under any prefix that New accepts. It never
// fails.
func TypeKey(_ context.Context, t *asynq.Task) (string, error) {
	typ := t.Type()
	if len(typ) <= keyBudget && !strings.HasPrefix(typ, "h:") && isNFC(typ) {
		return typ, nil
	}
	return hashed(typ), nil
}

// checkLimit validates WithLimit against the rest of c and backend b (nil
// is reported elsewhere).
func (c *config) checkLimit(b lock.Backend) error {
	if !c.limitSet {
		if c.waitSet {
			return lockdriver.InvalidArgument("config", "WithLimitWait needs WithLimit")
		}
		return nil
	}
	if c.limitWait < 0 {
		return lockdriver.InvalidArgument("config", "limit wait must not be negative")
	}
	if c.doneTTL != 0 {
		return lockdriver.InvalidArgument("config",
			"WithLimit does not combine with WithDoneTTL: the key of a limit is shared by different tasks, "+
				"so a done marker would drop them all; chain a deduplicating Guard before the limiting one instead")
	}
	return lockdriver.ValidateLimit(b, c.limit)
}
