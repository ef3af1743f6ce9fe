package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Coalescing: concurrent script calls share pipelines. docs/client-retries.md
// describes it and its limits.

// maxInFlight is how many round trips run at once.
const maxInFlight = 2

// maxBatch caps the commands of one pipeline.
const maxBatch = 128

// processor sends a prepared command.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// pipelineProcessor is what coalescing uses of a go-redis client.
type pipelineProcessor interface {
	processor
	Pipeline() redis.Pipeliner
}

// errUnanswered is the error of a batched command whose client panicked.
var errUnanswered = errors.New("redisbackend: the shared pipeline ended without a reply")

// coalescer shares pipelines among concurrent calls.
type coalescer struct {
	c      pipelineProcessor
	direct *directRule

	mu       sync.Mutex
	inFlight int
	queue    []*pending
}

// pending is one call. It is pooled unless its caller left while it was on
// the wire.
type pending struct {
	ctx      context.Context
	cmd      *redis.Cmd
	done     chan struct{} // receives once cmd has its reply
	trip     *roundTrip    // set under coalescer.mu
	panicked any           // the client's panic, for the first caller
}

var pendingPool = sync.Pool{New: func() any { return &pending{done: make(chan struct{}, 1)} }}

// newPending returns a pending for cmd from the pool.
func newPending(ctx context.Context, cmd *redis.Cmd) *pending {
	p := pendingPool.Get().(*pending)
	p.ctx, p.cmd = ctx, cmd
	return p
}

// free returns p, answered or never sent, to the pool.
func (p *pending) free() {
	*p = pending{done: p.done}
	pendingPool.Put(p)
}

// roundTrip is the state the callers of one round trip share.
type roundTrip struct {
	cancel context.CancelFunc
	live   atomic.Int32 // callers still waiting
}

// inlineTrip is the round trip of a call sent from its caller's goroutine.
var inlineTrip = &roundTrip{cancel: func() {}}

// leave is called by a caller that stops waiting; the last one cancels.
func (t *roundTrip) leave() {
	if t.live.Add(-1) == 0 {
		t.cancel()
	}
}

// newCoalescer returns a coalescer on c.
func newCoalescer(c pipelineProcessor, direct *directRule) *coalescer {
	return &coalescer{c: c, direct: direct}
}

// do runs cmd as Sender.Do does.
func (co *coalescer) do(ctx context.Context, cmd *redis.Cmd) error {
	p := newPending(ctx, cmd)
	co.mu.Lock()
	if co.inFlight < maxInFlight {
		co.inFlight++
		if sendsDirect(ctx, co.direct) {
			// Send from this goroutine; what queued meanwhile goes on.
			p.trip = inlineTrip
			co.mu.Unlock()
			one := [1]*pending{p} // on the stack
			co.send(inlineTrip, one[:])
			if t, next := co.next(); next != nil {
				go co.run(t, next)
			}
			<-p.done
			_ = co.answer(p)
			if cmd.Err() != nil && ctx.Err() != nil {
				return ErrAbandoned
			}
			return nil
		}
		batch := []*pending{p}
		t := co.takeLocked(batch)
		co.mu.Unlock()
		go co.run(t, batch)
	} else {
		co.queue = append(co.queue, p)
		co.mu.Unlock()
	}
	select {
	case <-p.done:
		return co.answer(p)
	case <-ctx.Done():
	}
	co.mu.Lock()
	if p.trip == nil {
		co.removeLocked(p)
		co.mu.Unlock()
		p.free()
		return ErrNotSent
	}
	co.mu.Unlock()
	select {
	case <-p.done:
		return co.answer(p)
	default:
	}
	p.trip.leave()
	return ErrAbandoned
}

// answer frees p and re-raises the client's panic.
func (co *coalescer) answer(p *pending) error {
	r := p.panicked
	p.free()
	if r != nil {
		panic(r)
	}
	return nil
}

// takeLocked marks batch as sent in one new round trip and returns it.
func (co *coalescer) takeLocked(batch []*pending) *roundTrip {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	t := &roundTrip{cancel: cancel}
	t.live.Store(int32(len(batch)))
	for _, p := range batch {
		p.trip = t
	}
	batch[0].ctx = ctx // send reads it here
	return t
}

// run sends batch, then the queued calls in batches of at most maxBatch,
// until the queue is empty.
func (co *coalescer) run(t *roundTrip, batch []*pending) {
	for batch != nil {
		co.send(t, batch)
		t, batch = co.next()
	}
}

// next takes up to maxBatch queued calls as the next round trip, or
// returns nil when none are queued.
func (co *coalescer) next() (*roundTrip, []*pending) {
	co.mu.Lock()
	defer co.mu.Unlock()
	if len(co.queue) == 0 {
		co.inFlight--
		return nil, nil
	}
	n := min(len(co.queue), maxBatch)
	batch := make([]*pending, n)
	copy(batch, co.queue)
	rest := copy(co.queue, co.queue[n:])
	clear(co.queue[rest:])
	co.queue = co.queue[:rest]
	return co.takeLocked(batch), batch
}

// send sends batch, alone or as one pipeline, and signals every done.
func (co *coalescer) send(t *roundTrip, batch []*pending) {
	ctx := batch[0].ctx
	defer func() {
		if r := recover(); r != nil {
			batch[0].panicked = r
			for _, p := range batch[1:] {
				p.cmd.SetErr(fmt.Errorf("%w (%v)", errUnanswered, r))
			}
		}
		t.cancel()
		for _, p := range batch {
			p.done <- struct{}{}
		}
	}()
	if len(batch) == 1 {
		_ = co.c.Process(ctx, batch[0].cmd)
		return
	}
	pipe := co.c.Pipeline()
	for _, p := range batch {
		_ = pipe.Process(ctx, p.cmd)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
}

func (co *coalescer) removeLocked(p *pending) {
	for i, x := range co.queue {
		if x == p {
			co.queue = append(co.queue[:i], co.queue[i+1:]...)
			return
		}
	}
}
