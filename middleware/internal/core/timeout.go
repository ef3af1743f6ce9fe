package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncguard-go/syncguard/lock"
)

// errSilent is in the chain of the error of a call that bounded ended:
// the backend did not answer within the backend timeout.
var errSilent = errors.New("the backend did not answer within the backend timeout")

// bounded runs f, one call to the backend, under the backend timeout.
// A call unanswered in time fails with lock.CodeNetworkTimeout (errSilent
// in its chain) while ctx lives on: the backend is silent, the caller has
// not gone away.
func (g *Guard) bounded(ctx context.Context, op string, f func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	err := f(cctx)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return &lock.Error{Code: lock.CodeNetworkTimeout, Op: op, Msg: "no answer within " + g.timeout.String(), Err: fmt.Errorf("%w: %w", errSilent, err)}
	}
	return err
}
