package guard

import (
	"context"
	"errors"

	"github.com/syncguard-go/syncguard/lock"
)

// bounded runs f, one call to the backend, under the backend timeout.
// A call unanswered in time fails with lock.CodeNetworkTimeout while ctx
// lives on: the backend is silent, the caller has not gone away.
func (g *Guard) bounded(ctx context.Context, op string, f func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	err := f(cctx)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return &lock.Error{Code: lock.CodeNetworkTimeout, Op: op, Msg: "no answer within " + g.timeout.String(), Err: err}
	}
	return err
}
