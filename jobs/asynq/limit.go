package asynqlock

import (
	"context"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// DefaultLimitPrefix namespaces the keys of a Guard built with WithLimit,
// unless WithPrefix says otherwise. It differs from DefaultPrefix, so a
// limit's key never meets a deduplicating Guard's lock key.
const DefaultLimitPrefix = "asynq-limit:"

// WithLimit makes the Guard a concurrency limit: at most n tasks with the
// same key run at once, each under a fenced slot. The key is the task type
// unless WithKeyFunc says otherwise. A task that finds every slot taken
// waits, then its policy applies. n is 1 to 10000; the backend must be a
// lock.IDBackend. It does not go with WithDoneTTL.
func WithLimit(n int) Option {
	return optionFunc(func(c *config) { c.limit, c.limitSet = n, true })
}

// DefaultLimitWait is how long a task waits for a slot of its full limit
// when WithLimitWait is not given.
const DefaultLimitWait = 5 * time.Second

// WithLimitWait sets how long a task whose limit is full waits for a slot,
// DefaultLimitWait by default. A freed slot goes straight to the oldest
// waiting task. A task waits at most half the time left before its
// deadline. d must not be negative, and needs WithLimit.
func WithLimitWait(d time.Duration) Option {
	return optionFunc(func(c *config) { c.limitWait, c.waitSet = d, true })
}

// TypeKey is the default KeyFunc of a Guard built with WithLimit: the task
// type, hashed as DefaultKeyIn hashes it. The limit then counts the
// running tasks of each type. It never fails.
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
