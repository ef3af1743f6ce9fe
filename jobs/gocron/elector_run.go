package gocronlock

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Start campaigns in the background until ctx ends or Stop is called.
func (e *Elector) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancel != nil && !closed(e.done) {
		return lockdriver.InvalidArgument("start", "the elector is already campaigning")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	e.cancel, e.done, e.err = cancel, done, nil
	go func() {
		defer close(done)
		err := election.Lead(ctx, e.b, e.key, e.identity, e.lead, e.opts...)
		if ctx.Err() != nil {
			err = nil
		}
		e.mu.Lock()
		e.err = err
		e.mu.Unlock()
	}()
	return nil
}

// Stop ends the campaign, releasing a term held, and returns the error
// that ended the campaign before, if any.
func (e *Elector) Stop() error {
	e.mu.Lock()
	cancel, done := e.cancel, e.done
	e.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cancel = nil
	return e.err
}

// IsLeader returns nil while this instance holds a term, and ErrNotLeader
// otherwise, without calling the backend.
func (e *Elector) IsLeader(context.Context) error {
	if t := e.term.Load(); t != nil && t.ctx.Err() == nil {
		return nil
	}
	return ErrNotLeader
}

// Lease returns the lease of the term this instance leads under.
func (e *Elector) Lease() (l lock.Lease, ok bool) {
	if t := e.term.Load(); t != nil && t.ctx.Err() == nil {
		return t.lease, true
	}
	return lock.Lease{}, false
}

// lead publishes the term until it ends.
func (e *Elector) lead(ctx context.Context, l lock.Lease) error {
	t := &term{ctx: ctx, lease: l}
	e.term.Store(t)
	<-ctx.Done()
	e.term.CompareAndSwap(t, nil)
	return nil
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
