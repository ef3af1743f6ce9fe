package lock

import (
	"context"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

func init() {
	contract.Term = func(ctx context.Context, b, l any, identity string, run func(ctx context.Context) error) error {
		be, _ := b.(Backend)
		return term(ctx, be, l.(Lease), identity, run)
	}
}

// term runs run, the leader's work in the term of lease l, as an OpTerm
// through b's hooks, if any, under ctx, the term's context. The hooks'
// next returns why the term ended (see OpTerm); term returns run's own
// error, or, when a hook did not let run start, the hook's.
func term(ctx context.Context, b Backend, l Lease, identity string, run func(ctx context.Context) error) error {
	var ran bool
	var runErr error
	op := &Op{Kind: OpTerm, Key: l.Key, ID: l.ID, TTL: l.TTL, Lease: l, Identity: identity}
	err := emit(ctx, b, op, func(hctx context.Context, _ *Op) error {
		ran = true
		runErr = run(hctx)
		if cause := context.Cause(ctx); cause != nil {
			return cause // lost, or Lead's context ended: not the work's doing
		}
		return runErr
	})
	if ran {
		return runErr
	}
	return err
}
