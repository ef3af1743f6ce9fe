package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Coalescing: the script calls of concurrent goroutines share pipelines.
//
// A call that finds fewer than maxInFlight round trips under way starts
// one for its command alone, with its own context's values (so hooks such
// as redisotel see an ordinary EVALSHA under the caller's span).
// Otherwise it queues. A round trip, when its replies are in, takes up to
// maxBatch queued calls and sends them as its next round trip, one
// pipeline; it ends when the queue is empty. Redis reads and answers a
// pipeline of N commands with one read and one write instead of N of each,
// and the client likewise (BenchmarkCycle and bench/ measure what that
// gives; bench/README.md has the figures).
//
// Round trips run on goroutines of their own (at most maxInFlight), and
// every caller waits for its reply or the end of its context, whichever
// comes first: go-redis does not watch a context while a command is on
// the wire (unless ContextTimeoutEnabled, off by default), and a stalled
// server would otherwise hold every caller for the client's read timeout
// times its retries. A caller that leaves while its command is still
// queued leaves the queue (nothing is sent: ErrNotSent); one that leaves
// after its command went out gets ErrAbandoned (the command may run). A
// round trip all of whose callers left is cancelled, so go-redis sends no
// retry of it. A lone call that sendsDirect lets out goes from its
// caller's goroutine instead (direct.go).

// maxInFlight is how many round trips the coalescer lets run at once. One
// in flight keeps pipelines deepest but leaves Redis idle while the client
// reads replies; two overlap the two. More send more calls alone, each
// with its own write and read: at 8 goroutines, four in flight cost the
// client more CPU per call than two (bench/README.md has the figures).
const maxInFlight = 2

// maxBatch caps the commands of one pipeline. go-redis reads all the
// replies of a pipeline under one read deadline (ReadTimeout), and retries
// the whole pipeline when that passes: an unbounded batch could outgrow it
// and then be re-sent whole. A batch this size takes Redis a small fraction
// of any read timeout in use.
const maxBatch = 128

// processor sends a prepared command.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// pipelineProcessor is what coalescing uses of a go-redis client (every
// redis.UniversalClient has it; the tests' fake has only this).
type pipelineProcessor interface {
	processor
	Pipeline() redis.Pipeliner
}

// errUnanswered is the error of a batched command whose round trip ended
// without replies (the client panicked, in a hook for instance).
var errUnanswered = errors.New("redisbackend: the shared pipeline ended without a reply")

// coalescer shares pipelines among the calls of concurrent goroutines
// (see the top of this file).
type coalescer struct {
	c pipelineProcessor
	// direct is the client's rule for calls that go out from their
	// callers' goroutines (direct.go, sendsDirect); nil: only calls whose
	// context cannot end do.
	direct *directRule

	mu       sync.Mutex
	inFlight int
	queue    []*pending
}

// pending is one call: its command and how its caller learns the outcome.
// A pending whose caller got its answer goes back to pendingPool; one whose
// caller left while it was on the wire is left to the garbage collector
// (its round trip still writes to it).
type pending struct {
	ctx  context.Context // the caller's: its values go with the command
	cmd  *redis.Cmd
	done chan struct{} // receives once when cmd has its reply (or error)
	trip *roundTrip    // set under coalescer.mu when the call is taken
	// panicked is what the client panicked with while sending the round
	// trip of which this call is the first (read after done): the caller
	// panics with it, as if it had sent the command itself.
	panicked any
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

// inlineTrip is the round trip of a lone call sent from the caller's
// goroutine (coalescer.do, sendsDirect): nobody leaves it, and its cancel
// does nothing.
var inlineTrip = &roundTrip{cancel: func() {}}

// leave is called by a caller that stops waiting; the last one cancels
// the round trip, so go-redis retries it no more.
func (t *roundTrip) leave() {
	if t.live.Add(-1) == 0 {
		t.cancel()
	}
}

// newCoalescer returns a coalescer on c (direct: see coalescer.direct).
func newCoalescer(c pipelineProcessor, direct *directRule) *coalescer {
	return &coalescer{c: c, direct: direct}
}

// do runs cmd and returns nil when it has its reply (cmd.Err() tells how
// it went), or ErrNotSent or ErrAbandoned when ctx ended first; cmd must
// not be read then (a round trip may still write it).
func (co *coalescer) do(ctx context.Context, cmd *redis.Cmd) error {
	p := newPending(ctx, cmd)
	co.mu.Lock()
	if co.inFlight < maxInFlight {
		co.inFlight++
		if sendsDirect(ctx, co.direct) {
			// Nothing but go-redis's own deadline can end this call early:
			// send it from this goroutine with its own context (no caller
			// can leave this round trip, so it needs no cancel of its
			// own), and leave what queued meanwhile to a goroutine.
			p.trip = inlineTrip
			co.mu.Unlock()
			one := [1]*pending{p} // not kept: on the stack
			co.send(inlineTrip, one[:])
			if t, next := co.next(); next != nil {
				go co.run(t, next)
			}
			<-p.done
			_ = co.answer(p)
			if cmd.Err() != nil && ctx.Err() != nil {
				// go-redis gave up at the deadline (or the reply failed
				// just as it passed): the command may have run.
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
	case <-p.done: // answered at the same moment
		return co.answer(p)
	default:
	}
	p.trip.leave()
	return ErrAbandoned
}

// answer frees p, whose done has been received, re-raising a panic of the
// client in the caller that stood for the round trip.
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
	// The round trip's context rides on the first command; send reads it.
	batch[0].ctx = ctx
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

// next ends a round trip: it takes up to maxBatch queued calls as the next
// one, or, with none queued, returns nil and counts one fewer in flight.
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

// send sends batch, alone or as one pipeline, and signals every done. A
// panic of the client is handed to the first caller; the others get
// errUnanswered.
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
	// Each command carries its own error.
	_, _ = pipe.Exec(ctx)
}

func (co *coalescer) removeLocked(p *pending) {
	for i, x := range co.queue {
		if x == p {
			co.queue = append(co.queue[:i], co.queue[i+1:]...)
			return
		}
	}
}
