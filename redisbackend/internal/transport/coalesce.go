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

// maxInFlight is how many round trips run at once while at most that many
// calls are under way: each goes out alone, as a queued call's wake-up
// costs the client about what a shared pipeline of two saves, and eight
// callers alone wake up no more often than go-redis's own.
const maxInFlight = 8

// busyInFlight is how many round trips run at once while more than
// maxInFlight calls are under way: the rest queue, and share pipelines.
const busyInFlight = 2

// maxHoppedInFlight is how many round trips run at once, while at most
// that many calls are under way, when the calls cannot go out from their
// callers' goroutines (sendsDirect is false: each waits on a goroutine of
// its own): up to four go out alone. A queued one waits for a pipeline's
// goroutine as well, and at 4 goroutines with a deadline queuing after two
// cost a fifth of the cycles per second (bench/README.md).
const maxHoppedInFlight = 4

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

	calls atomic.Int32 // calls under way, queued or not

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
	direct   bool          // the call may lead a batch (mayLead)
	lead     []*pending    // set under coalescer.mu: the batch this call sends
	panicked any           // the client's panic, for the call that sent it
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
	cancel context.CancelFunc // nil: the trip has no context of its own
	live   atomic.Int32       // callers still waiting
}

// ownTrip is the round trip of a call sent alone on its caller's own
// context, or of a batch sent by a caller that waits for it: there is no
// context of the trip's own to cancel. A lone call whose caller leaves at
// its context's end leaves go-redis that ended context, which stops its
// retries as cancelling one of the trip's own would.
var ownTrip = &roundTrip{}

// leave is called by a caller that stops waiting; the last one cancels.
func (t *roundTrip) leave() {
	if t.cancel != nil && t.live.Add(-1) == 0 {
		t.cancel()
	}
}

// newCoalescer returns a coalescer on c.
func newCoalescer(c pipelineProcessor, direct *directRule) *coalescer {
	return &coalescer{c: c, direct: direct}
}

// do runs cmd as Sender.Do does.
//
// A call that may go out from its caller's goroutine (sendsDirect) does
// so: alone when few round trips are under way, or, when it queued, as the
// leader of its batch, which a round trip that ends hands to it. Only a
// batch without such a call goes out from a goroutine of its own (run): a
// queued call then costs one wake-up, not a new goroutine and a wake-up.
func (co *coalescer) do(ctx context.Context, cmd *redis.Cmd) error {
	calls := co.calls.Add(1)
	defer co.calls.Add(-1)
	p := newPending(ctx, cmd)
	direct := sendsDirect(ctx, co.direct)
	co.mu.Lock()
	if co.inFlight < aloneLimit(direct, calls) {
		co.inFlight++
		if direct {
			return co.sendAlone(ctx, p, cmd)
		}
		p.trip = ownTrip
		co.mu.Unlock()
		go co.runAlone(p)
	} else {
		p.direct = mayLead(ctx, co.direct)
		co.queue = append(co.queue, p)
		co.mu.Unlock()
	}
	select {
	case <-p.done:
		if p.lead != nil {
			return co.leadBatch(p)
		}
		_ = co.answer(p)
		return endedWith(ctx, cmd)
	case <-ctx.Done():
	}
	co.mu.Lock()
	if p.trip == nil {
		co.removeLocked(p)
		co.mu.Unlock()
		p.free()
		return ErrNotSent
	}
	led := p.lead != nil
	co.mu.Unlock()
	if led {
		// Its batch waits for it: it sends it, as it would have sent its
		// own command alone.
		<-p.done
		return co.leadBatch(p)
	}
	select {
	case <-p.done:
		_ = co.answer(p)
		return endedWith(ctx, cmd)
	default:
	}
	p.trip.leave()
	return ErrAbandoned
}

// aloneLimit is how many round trips may be under way for a call to go
// out alone, with calls under way: maxInFlight for a call sent from its
// caller's goroutine, maxHoppedInFlight for one that waits on a goroutine
// of its own, while so few calls are under way; else busyInFlight.
func aloneLimit(direct bool, calls int32) int {
	switch {
	case direct && calls <= maxInFlight:
		return maxInFlight
	case calls <= maxHoppedInFlight:
		return maxHoppedInFlight
	}
	return busyInFlight
}

// sendAlone sends cmd, the call p, from the caller's goroutine; what
// queued meanwhile goes on after it, even when the client panics. co.mu is
// held on entry, and sendAlone unlocks it.
func (co *coalescer) sendAlone(ctx context.Context, p *pending, cmd *redis.Cmd) error {
	co.mu.Unlock()
	p.free() // it never queued: nothing else holds it
	defer co.handOn()
	return processDirect(ctx, co.c, cmd)
}

// mayLead reports whether a queued call on ctx may send its batch from its
// own goroutine: it may go out from there (sendsDirect) and has no
// deadline, so the batch's round trip has none of its own either, as a
// round trip on a goroutine of its own.
func mayLead(ctx context.Context, d *directRule) bool {
	if ctx.Done() == nil {
		return true
	}
	_, has := ctx.Deadline()
	return !has && sendsDirect(ctx, d)
}

// leadBatch sends the batch p was handed from p's goroutine, hands on the
// queue, and returns p's answer. The batch goes out on p's context without
// its cancellation: the other calls in it do not end with p's.
func (co *coalescer) leadBatch(p *pending) error {
	batch, ctx := p.lead, p.ctx
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	co.send(ctx, ownTrip, batch, p)
	<-p.done // p's own answer, signalled with the batch's
	co.handOn()
	return co.answer(p)
}

// handOn gives the next queued batch, if any, to a round trip: its leader
// when it has one, else a goroutine of its own.
func (co *coalescer) handOn() {
	t, batch, leader := co.next(true)
	switch {
	case leader != nil:
		leader.done <- struct{}{}
	case batch != nil:
		go co.run(t, batch)
	}
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

// runAlone sends p, a call alone in its round trip, on its caller's
// context, then goes on as run.
func (co *coalescer) runAlone(p *pending) {
	one := [1]*pending{p} // on the stack
	co.run(ownTrip, one[:])
}

// run sends batch, then the queued calls in batches of at most maxBatch,
// until the queue is empty or a batch has a leader to send it.
func (co *coalescer) run(t *roundTrip, batch []*pending) {
	for batch != nil {
		co.send(batch[0].ctx, t, batch, batch[0])
		var leader *pending
		t, batch, leader = co.next(true)
		if leader != nil {
			leader.done <- struct{}{}
			return
		}
	}
}

// next takes up to maxBatch queued calls as the next round trip, or
// returns nil when none are queued. With lead, a batch with a call that
// may go out from its caller's goroutine has that call as its leader
// (p.lead set) and no roundTrip of its own.
func (co *coalescer) next(lead bool) (*roundTrip, []*pending, *pending) {
	co.mu.Lock()
	defer co.mu.Unlock()
	if len(co.queue) == 0 {
		co.inFlight--
		return nil, nil, nil
	}
	n := min(len(co.queue), maxBatch)
	batch := make([]*pending, n)
	copy(batch, co.queue)
	rest := copy(co.queue, co.queue[n:])
	clear(co.queue[rest:])
	co.queue = co.queue[:rest]
	if lead {
		for _, p := range batch {
			if p.direct {
				for _, q := range batch {
					q.trip = ownTrip
				}
				p.lead = batch
				return nil, batch, p
			}
		}
	}
	return co.takeLocked(batch), batch, nil
}

// send sends batch on ctx, alone or as one pipeline, and signals every
// done. A panic of the client goes to owner, the others get errUnanswered.
func (co *coalescer) send(ctx context.Context, t *roundTrip, batch []*pending, owner *pending) {
	defer func() {
		if r := recover(); r != nil {
			owner.panicked = r
			for _, p := range batch {
				if p != owner {
					p.cmd.SetErr(fmt.Errorf("%w (%v)", errUnanswered, r))
				}
			}
		}
		if t.cancel != nil {
			t.cancel()
		}
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
