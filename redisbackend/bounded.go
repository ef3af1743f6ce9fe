package redisbackend

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

// Bounded calls. go-redis does not watch a context while a command is on
// the wire unless the client sets ContextTimeoutEnabled (off by default):
// with a stalled server a call would return only after the client's read
// timeout, once per retry. Every Backend call therefore waits for its
// reply or the end of its context, whichever comes first (the coalescer
// does so for script calls; bounded for the rest).

// abandonedError is the error of a call whose context ended before its
// reply came. It matches errAbandoned or errNotSent (whether the command
// may have run) and the context's error.
type abandonedError struct {
	kind   error // errAbandoned or errNotSent
	ctxErr error
}

// Error says which kind of abandonment and the context's error.
func (e *abandonedError) Error() string { return e.kind.Error() + ": " + e.ctxErr.Error() }

// Unwrap returns the kind and the context's error, for errors.Is.
func (e *abandonedError) Unwrap() []error { return []error{e.kind, e.ctxErr} }

// abandoned returns the error of a call that stopped waiting for kind
// (errAbandoned or errNotSent) because ctx ended.
func abandoned(ctx context.Context, kind error) error {
	err := ctx.Err()
	if err == nil {
		err = context.Canceled
	}
	return &abandonedError{kind: kind, ctxErr: err}
}

// bounded runs f, which blocks on go-redis, and returns nil when f has
// returned, or an error matching errAbandoned and ctx.Err() when ctx ends
// first. f then goes on in the background with a context (ctx's values)
// that is cancelled, so go-redis sends no retry and waits for no
// connection; the caller must not read what f writes. A panic in f is
// raised in the caller.
func bounded(ctx context.Context, f func(ctx context.Context)) error {
	if ctx.Done() == nil {
		f(ctx)
		return nil
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	var panicked any
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		f(fctx)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		select {
		case <-done: // finished at the same moment
		default:
			cancel()
			return abandoned(ctx, errAbandoned)
		}
	}
	cancel()
	if panicked != nil {
		panic(panicked)
	}
	return nil
}

// isAbandoned reports whether err is that of a call that stopped waiting
// while its command was on the wire.
func isAbandoned(err error) bool { return errors.Is(err, errAbandoned) }

// mayHaveRun reports whether a call that failed with err (mapped) may have
// run on the server: it timed out or lost its connection. A reply from
// Redis (an error reply: OOM, LOADING, READONLY, ...) means the script did
// not take the lock, and an acquisition that ReplicaAck gave up has
// released it already.
func mayHaveRun(err error) bool {
	var reply redis.Error
	if errors.As(err, &reply) || errors.Is(err, errNotAcked) {
		return false
	}
	switch lock.CodeOf(err) {
	case lock.CodeNetworkTimeout, lock.CodeServiceUnavailable:
		return true
	}
	return false
}
