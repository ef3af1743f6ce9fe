package rwlock

import (
	"context"
	"errors"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Read runs fn while holding key as one of its readers: as [lock.Do]
// does for a lock, with the same options, keep-alive, lost-lease notice
// ([lock.ErrLeaseLost]) and release. Readers share the key; a writer
// waiting for it keeps new readers out. b must have a read-write
// [Backend] (itself or under its hooks), else Read fails with
// [lock.CodeInvalidArgument] matching errors.ErrUnsupported.
func Read(ctx context.Context, b lock.Backend, key string, fn func(ctx context.Context, l lock.Lease) error, opts ...lock.Option) error {
	return do(ctx, b, key, ModeRead, fn, opts)
}

// Write runs fn while holding key as its one writer, as [lock.Do] does:
// nobody else holds the key meanwhile, and the lease's fence is greater
// than every fence granted on the key before it, readers' included.
func Write(ctx context.Context, b lock.Backend, key string, fn func(ctx context.Context, l lock.Lease) error, opts ...lock.Option) error {
	return do(ctx, b, key, ModeWrite, fn, opts)
}

// HoldRead holds key as one of its readers until release is called, as
// [lock.Hold] does: held carries the lease ([lock.LeaseFrom]) and ends
// with a cause matching [lock.ErrLeaseLost] when the lease is lost.
func HoldRead(ctx context.Context, b lock.Backend, key string, opts ...lock.Option) (held context.Context, l lock.Lease, release func() error, err error) {
	return hold(ctx, b, key, ModeRead, opts)
}

// HoldWrite holds key as its one writer until release is called, as
// [lock.Hold] does.
func HoldWrite(ctx context.Context, b lock.Backend, key string, opts ...lock.Option) (held context.Context, l lock.Lease, release func() error, err error) {
	return hold(ctx, b, key, ModeWrite, opts)
}

// do is Read and Write.
func do(ctx context.Context, b lock.Backend, key string, mode Mode, fn func(context.Context, lock.Lease) error, opts []lock.Option) error {
	if fn == nil {
		return lockdriver.InvalidArgument("do", "nil function")
	}
	v, l, err := acquire(ctx, b, key, mode, opts)
	if err != nil {
		return err
	}
	return lock.Do(ctx, v, key, func(held context.Context, l lock.Lease) error {
		defer v.reportLoss(ctx, held, l)() // before Do's release ends held
		return fn(held, l)
	}, append(opts[:len(opts):len(opts)], lock.WithLease(l))...)
}

// hold is HoldRead and HoldWrite.
func hold(ctx context.Context, b lock.Backend, key string, mode Mode, opts []lock.Option) (context.Context, lock.Lease, func() error, error) {
	v, l, err := acquire(ctx, b, key, mode, opts)
	if err != nil {
		return nil, lock.Lease{}, nil, err
	}
	held, l, release, err := lock.Hold(ctx, v, key, append(opts[:len(opts):len(opts)], lock.WithLease(l))...)
	if err != nil {
		return nil, lock.Lease{}, nil, err
	}
	end := v.reportLoss(ctx, held, l)
	return held, l, func() error {
		end()
		return release()
	}, nil
}

// acquire checks the call before any I/O, then takes key in mode as
// lock.Acquire takes a lock: retries, the backend's queue, its deadlines.
// The whole acquisition is an OpWait of b's hooks, with the mode.
func acquire(ctx context.Context, b lock.Backend, key string, mode Mode, opts []lock.Option) (*view, lock.Lease, error) {
	s, err := lock.Resolve(nil, opts...)
	switch {
	case err != nil:
		return nil, lock.Lease{}, err
	case ctx == nil:
		return nil, lock.Lease{}, lockdriver.InvalidArgument("acquire", "nil context")
	case b == nil:
		return nil, lock.Lease{}, lockdriver.InvalidArgument("acquire", "nil backend")
	case s.Limit != 0:
		return nil, lock.Lease{}, lockdriver.InvalidArgument("config", "lock.WithLimit does not apply to a read-write lock")
	}
	if _, err := lockdriver.NormalizeKey(key); err != nil {
		return nil, lock.Lease{}, err
	}
	rw, ok := lockdriver.Extension[Backend](b)
	if !ok {
		return nil, lock.Lease{}, &lock.Error{Code: lock.CodeInvalidArgument, Op: "config",
			Msg: "read-write locks need a backend that implements rwlock.Backend", Err: errors.ErrUnsupported}
	}
	v := &view{b: b, rw: rw, mode: mode}
	op := &lock.Op{Kind: lock.OpWait, Key: key, TTL: s.TTL, Mode: mode.String()}
	err = lock.Emit(ctx, b, op, func(ctx context.Context, op *lock.Op) (err error) {
		if op.Lease, err = lock.Acquire(ctx, v, key, opts...); err == nil && op.Lease != v.last {
			// No attempt returned it: a release handed it to the waiter.
			_ = v.emit(ctx, &lock.Op{Kind: lock.OpGranted, Key: key, ID: op.Lease.ID, TTL: op.Lease.TTL, Lease: op.Lease}, nil)
		}
		return err
	})
	switch {
	case err != nil:
		return nil, lock.Lease{}, err
	case op.Lease.ID == "":
		return nil, lock.Lease{}, &lock.Error{Code: lock.CodeInternal, Op: "acquire", Msg: "a hook returned from OpWait without running the acquisition"}
	}
	return v, op.Lease, nil
}
