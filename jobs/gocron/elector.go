package gocronlock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/go-co-op/gocron/v2"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// ErrNotLeader is returned by Elector.IsLeader when this instance does
// not lead.
var ErrNotLeader = errors.New("gocronlock: not the leader")

// Elector is a gocron.Elector on a lock.Backend, for
// gocron.WithDistributedElector. It is safe for concurrent use.
type Elector struct {
	b        lock.Backend
	key      string
	identity string
	opts     []election.Option

	term atomic.Pointer[term] // nil while not leading

	mu     sync.Mutex
	cancel context.CancelFunc // nil when not started
	done   chan struct{}
	err    error // the campaign's error, once done
}

// term is the lease this instance leads under and its context.
type term struct {
	ctx   context.Context
	lease lock.Lease
}

var _ gocron.Elector = (*Elector)(nil)

// NewElector returns an Elector that campaigns on key as identity once
// started; opts are election.Lead's. Bad arguments are refused without I/O
// with an InvalidArgument *lock.Error.
func NewElector(b lock.Backend, key, identity string, opts ...election.Option) (*Elector, error) {
	if err := election.Validate(b, key, identity, opts...); err != nil {
		return nil, err
	}
	return &Elector{b: b, key: key, identity: identity, opts: opts}, nil
}
