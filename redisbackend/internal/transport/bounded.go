package transport

import (
	"context"
	"errors"
)

// Bounded calls. go-redis does not watch a context while a command is on
// the wire unless the client sets ContextTimeoutEnabled (off by default):
// with a stalled server a call would return only after the client's read
// timeout, once per retry. Every call therefore waits for its reply or the
// end of its context, whichever comes first (Sender.Do for single
// commands; Bounded for the rest).

// ErrNotSent is in the chain of the error of a call whose context ended
// before its command was sent: it did not run.
var ErrNotSent = errors.New("redisbackend: the context ended before the command was sent")

// ErrAbandoned is in the chain of the error of a call whose context ended
// while its command was on the wire: it may have run.
var ErrAbandoned = errors.New("redisbackend: the context ended while the command was on the wire; it may have run")

// abandonedError is the error of a call whose context ended before its
// reply came. It matches ErrAbandoned or ErrNotSent (whether the command
// may have run) and the context's error.
type abandonedError struct {
	kind   error // ErrAbandoned or ErrNotSent
	ctxErr error
}

// Error says which kind of abandonment and the context's error.
func (e *abandonedError) Error() string { return e.kind.Error() + ": " + e.ctxErr.Error() }

// Unwrap returns the kind and the context's error, for errors.Is.
func (e *abandonedError) Unwrap() []error { return []error{e.kind, e.ctxErr} }

// abandoned returns the error of a call that stopped waiting for kind
// (ErrAbandoned or ErrNotSent) because ctx ended.
func abandoned(ctx context.Context, kind error) error {
	err := ctx.Err()
	if err == nil {
		err = context.Canceled
	}
	return &abandonedError{kind: kind, ctxErr: err}
}

// Bounded runs f, which blocks on go-redis, and returns nil when f has
// returned, or an error matching ErrAbandoned and ctx.Err() when ctx ends
// first. f then goes on in the background with a context (ctx's values)
// that is cancelled, so go-redis sends no retry and waits for no
// connection; the caller must not read what f writes. A panic in f is
// raised in the caller.
func Bounded(ctx context.Context, f func(ctx context.Context)) error {
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
			return abandoned(ctx, ErrAbandoned)
		}
	}
	cancel()
	if panicked != nil {
		panic(panicked)
	}
	return nil
}
