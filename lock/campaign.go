package lock

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

func init() {
	contract.Wait = func(ctx context.Context, b any, key string, ttl time.Duration, run func(context.Context) (any, error)) (any, error) {
		be, _ := b.(Backend)
		return wait(ctx, be, key, ttl, run)
	}
	contract.Granted = func(ctx context.Context, b, l any) {
		be, _ := b.(Backend)
		g := l.(Lease)
		_ = emit(ctx, be, &Op{Kind: OpGranted, Key: g.Key, ID: g.ID, TTL: g.TTL, Lease: g}, nil)
	}
	contract.Wrapped = func(b any) any {
		if h, ok := b.(hookChain); ok {
			return h.chain().b
		}
		return nil
	}
}

// wait runs run, an acquisition of key that its caller runs itself, as an
// OpWait through b's hooks, as Acquire runs its own; run returns a Lease.
func wait(ctx context.Context, b Backend, key string, ttl time.Duration, run func(context.Context) (any, error)) (any, error) {
	if _, ok := b.(hookChain); !ok {
		return run(ctx)
	}
	return waitOp(ctx, b, &Op{Kind: OpWait, Key: key, TTL: ttl}, func(ctx context.Context) (Lease, error) {
		l, err := run(ctx)
		if err != nil {
			return Lease{}, err
		}
		return l.(Lease), nil
	})
}
