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

// WithLimit makes the Guard a concurrency limit instead of a lock: at most
// n tasks with the same key run at once, across every worker and server
// that shares the backend, each under a slot of its own (an ordinary
// lease: fenced, kept alive, lock.LeaseFrom in the handler; see
// lock.WithLimit). The key is the task type unless WithKeyFunc says
// otherwise (TypeKey), so WithLimit(2) alone means "at most 2 running
// tasks of each type"; a KeyFunc returning, say, the tenant's id from the
// payload makes it per tenant.
//
// A task that finds every slot taken waits for one, for up to
// WithLimitWait (DefaultLimitWait, 5s, unless told otherwise): a slot
// freed meanwhile is handed to the oldest waiting task at once. A task
// that still has no slot then fails with a *LimitError and is handled
// like a busy duplicate: under policy Requeue (the default) asynq retries
// it, not as a failure with IsFailure, and by the earliest slot expiry
// with RetryDelay; under policy Drop it is deleted. It never runs without
// a slot.
//
// n must be between 1 and lockdriver.MaxLimit, and the backend must implement
// lock.IDBackend (such as *redisbackend.Backend); New fails otherwise. New
// also rejects WithLimit with WithDoneTTL: a done marker is per key, and
// the key of a limit is shared by different tasks (every task of a type,
// by default), so marking it done would drop them all. To deduplicate and
// limit, chain two Guards, the deduplicating one first:
//
//	mux.Use(dedup.Middleware(), limit.Middleware())
func WithLimit(n int) Option {
	return optionFunc(func(c *config) { c.limit, c.limitSet = n, true })
}

// DefaultLimitWait is how long a task waits for a slot of its full limit
// when WithLimitWait is not given.
const DefaultLimitWait = 5 * time.Second

// WithLimitWait sets how long a task that finds every slot of its limit
// (WithLimit) taken waits for one before its policy applies (default
// DefaultLimitWait, 5s; 0: no wait, the task fails with a *LimitError at
// once). It waits in the backend's queue of the key when the backend has
// one (lock.IDBackend.Join, as *redisbackend.Backend has): the release of a
// slot hands it straight to the oldest waiting task, whichever process it
// runs in, so a slot freed while tasks wait is busy again within a round
// trip to Redis. (A backend without a queue is polled instead, at least
// every lockdriver.QueuedPollInterval; a transient backend failure is retried
// within the wait as well.) Only when no slot frees within the wait
// does the task fail with a *LimitError (its Waited says how long it
// waited) and the policy apply: under Requeue asynq retries it, with
// RetryDelay by the earliest slot expiry its last attempt saw; under Drop
// it is deleted.
//
// Why wait: asynq moves a retried task back to its queue only every
// Config.DelayedTaskCheckInterval (5s by default), whatever delay
// RetryDelay asks for. A limit whose tasks are all requeued at once keeps
// its freed slots idle until the next check: with asynq's defaults, a
// limit of n ran n tasks per 5 seconds, however short the tasks. Waiting
// tasks instead take freed slots at once, and only a task that waited in
// vain goes through asynq's retry set.
//
// A waiting task holds its asynq worker, as running it would, and the wait
// counts against the task's own time: asynq gives the handler a context
// that ends at the task's deadline (asynq.Timeout or asynq.Deadline; 30
// minutes when neither is set), and a task waits at most half the time
// left before it, leaving the other half for the work: a task enqueued
// with asynq.Timeout(4*time.Second) waits at most 2s, whatever d. Keep d
// below Config.ShutdownTimeout (8s by default), because a server shutting
// down lets its waiting tasks wait on, and below the time left over by
// tasks whose work takes most of their Timeout.
//
// d must not be negative, and New rejects WithLimitWait without WithLimit.
// A lock.WithWait given with WithLockOptions does not change it.
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
