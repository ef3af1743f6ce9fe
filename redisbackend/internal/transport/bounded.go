package transport

import (
	"context"
	"errors"
)

// ErrNotSent is in the chain of the error of a call whose context ended
// before its command was sent: it did not run.
var ErrNotSent = errors.New("redisbackend: the context ended before the command was sent")

// ErrAbandoned is in the chain of the error of a call whose context ended
// while its command was on the wire: it may have run.
var ErrAbandoned = errors.New("redisbackend: the context ended while the command was on the wire; it may have run")

// abandonedError matches its kind and the context's error.
type abandonedError struct {
	kind   error
	ctxErr error
}

// Error joins the two errors.
func (e *abandonedError) Error() string { return e.kind.Error() + ": " + e.ctxErr.Error() }

// Unwrap returns both errors.
func (e *abandonedError) Unwrap() []error { return []error{e.kind, e.ctxErr} }

// abandoned returns the error of a call that stopped waiting.
func abandoned(ctx context.Context, kind error) error {
	err := ctx.Err()
	if err == nil {
		err = context.Canceled
	}
	return &abandonedError{kind: kind, ctxErr: err}
}

// Bounded runs f and returns nil when f has returned, or an error matching
// ErrAbandoned and ctx.Err() when ctx ends first. f's context is then
// cancelled so go-redis retries nothing. A panic in f is raised here.
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
		case <-done:
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
