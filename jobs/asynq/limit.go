package asynqlock

import (
	"context"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
)

// DefaultLimitPrefix namespaces every key of a Guard built with WithLimit
// unless WithPrefix says otherwise. It differs from DefaultPrefix so that a
// limit key (a task type, by default) never meets the lock key of a
// deduplicating Guard on the same backend: a key is used either as a lock
// or as a limit (see lock.ErrKindMismatch).
const DefaultLimitPrefix = "asynq-limit:"

// WithLimit makes the Guard a concurrency limit instead of a lock: at most
// n tasks with the same key run at once, across every worker and server
// that shares the backend, each under a slot of its own (an ordinary
// lease: fenced, kept alive, lock.LeaseFrom in the handler; see
// lock.WithLimit). The key is the task type unless WithKeyFunc says
// otherwise (TypeKey), so WithLimit(2) alone means "at most 2 running
// tasks of each type"; a KeyFunc returning, say, the tenant's id from the
// payload makes it per tenant.
//
// A task that finds every slot taken fails with a *LimitError and is
// handled like a busy duplicate: under policy Requeue (the default) asynq
// retries it, not as a failure with IsFailure, and after a short random
// delay with RetryDelay; under policy Drop it is deleted. It never runs
// without a slot.
//
// n must be between 1 and lock.MaxLimit, and the backend must implement
// lock.Limiter (such as *redisbackend.Backend); New fails otherwise. New
// also rejects WithLimit with WithDoneTTL: a done marker is per key, and
// the key of a limit is shared by different tasks (every task of a type,
// by default), so marking it done would drop them all. To deduplicate and
// limit, chain two Guards, the deduplicating one first:
//
//	mux.Use(dedup.Middleware(), limit.Middleware())
func WithLimit(n int) Option {
	return optionFunc(func(c *config) { c.limit, c.limitSet = n, true })
}

// TypeKey is the default KeyFunc of a Guard built with WithLimit: the task
// type, so that the limit counts the running tasks of each type. A type
// that is not valid UTF-8 already in NFC, begins with "h:" or is longer
// than lock.MaxKeyBytes-MaxPrefixBytes bytes is hashed ("h:" and its hex
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
		return nil
	}
	if c.doneTTL != 0 {
		return lock.InvalidArgument("config",
			"WithLimit does not combine with WithDoneTTL: the key of a limit is shared by different tasks, "+
				"so a done marker would drop them all; chain a deduplicating Guard before the limiting one instead")
	}
	return lock.ValidateLimit(b, c.limit)
}
