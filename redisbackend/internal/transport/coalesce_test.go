package transport

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// fakeClient is a pipelineProcessor whose round trips block until the test
// lets them finish; a finished command's value is its second argument.
type fakeClient struct {
	started chan trip     // each round trip, as it begins
	finish  chan struct{} // one token finishes one round trip
	// panicLone and panicPipe make the next lone command, or the next
	// pipeline, to finish panic instead.
	panicLone, panicPipe atomic.Bool
}

type trip struct {
	ctx  context.Context
	cmds []redis.Cmder
	pipe bool
}

func newFakeClient() *fakeClient {
	return &fakeClient{started: make(chan trip, 100), finish: make(chan struct{}, 100)}
}

func (f *fakeClient) Process(ctx context.Context, cmd redis.Cmder) error {
	return f.roundTrip(trip{ctx: ctx, cmds: []redis.Cmder{cmd}})
}

func (f *fakeClient) Pipeline() redis.Pipeliner { return &fakePipe{f: f} }

func (f *fakeClient) roundTrip(t trip) error {
	f.started <- t
	<-f.finish
	if (!t.pipe && f.panicLone.CompareAndSwap(true, false)) || (t.pipe && f.panicPipe.CompareAndSwap(true, false)) {
		panic("fake client: boom")
	}
	for _, c := range t.cmds {
		if err := t.ctx.Err(); err != nil {
			c.SetErr(err)
			continue
		}
		c.(*redis.Cmd).SetVal(c.Args()[1])
	}
	return nil
}

// fakePipe implements the two Pipeliner methods the coalescer uses.
type fakePipe struct {
	redis.Pipeliner
	f    *fakeClient
	cmds []redis.Cmder
}

func (p *fakePipe) Process(_ context.Context, cmd redis.Cmder) error {
	p.cmds = append(p.cmds, cmd)
	return nil
}

func (p *fakePipe) Exec(ctx context.Context) ([]redis.Cmder, error) {
	return p.cmds, p.f.roundTrip(trip{ctx: ctx, cmds: p.cmds, pipe: true})
}

// call is one caller of the coalescer under test.
type call struct {
	cmd      *redis.Cmd
	done     chan struct{}
	err      error // what co.do returned, read after done
	panicked any   // what co.do panicked with, read after done
}

func startCall(ctx context.Context, co *coalescer, name string) *call {
	c := &call{cmd: redis.NewCmd(ctx, "echo", name), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer func() { c.panicked = recover() }()
		c.err = co.do(ctx, c.cmd)
	}()
	return c
}

func (c *call) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("call %v did not return", c.cmd.Args())
	}
}

func nextTrip(t *testing.T, f *fakeClient) trip {
	t.Helper()
	select {
	case tr := <-f.started:
		return tr
	case <-time.After(5 * time.Second):
		t.Fatal("no round trip started")
		return trip{}
	}
}

func noTrip(t *testing.T, f *fakeClient) {
	t.Helper()
	select {
	case tr := <-f.started:
		t.Fatalf("unexpected round trip with %d commands", len(tr.cmds))
	case <-time.After(50 * time.Millisecond):
	}
}

// finishTrips lets n round trips end.
func (f *fakeClient) finishTrips(n int) {
	for i := 0; i < n; i++ {
		f.finish <- struct{}{}
	}
}

// enqueue starts a call that must queue behind the round trips in flight,
// and waits until it is the queue's n-th.
func enqueue(t *testing.T, ctx context.Context, co *coalescer, name string, n int) *call {
	t.Helper()
	c := startCall(ctx, co, name)
	waitQueued(t, co, n)
	return c
}

func waitQueued(t *testing.T, co *coalescer, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		co.mu.Lock()
		got := len(co.queue)
		co.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued = %d, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkIdle waits until no round trip is in flight and nothing queued: a
// round trip's goroutine answers its callers before it looks at the queue,
// so it may end just after they return.
func checkIdle(t *testing.T, co *coalescer) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		co.mu.Lock()
		inFlight, queued := co.inFlight, len(co.queue)
		co.mu.Unlock()
		if inFlight == 0 && queued == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("after all calls: inFlight %d, queued %d, want 0, 0", inFlight, queued)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// saturate starts maxInFlight lone calls and waits until they are all on
// the wire.
func saturate(t *testing.T, co *coalescer, f *fakeClient) []*call {
	t.Helper()
	var calls []*call
	for i := 0; i < maxInFlight; i++ {
		calls = append(calls, startCall(context.Background(), co, "lone"+strconv.Itoa(i)))
		if tr := nextTrip(t, f); tr.pipe || len(tr.cmds) != 1 {
			t.Fatalf("call %d: pipe %v with %d commands, want a lone command", i, tr.pipe, len(tr.cmds))
		}
	}
	return calls
}

type ctxKey struct{}

func TestCoalesceLoneCallUsesItsContext(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	ctx := context.WithValue(context.Background(), ctxKey{}, "mine")
	c := startCall(ctx, co, "a")
	tr := nextTrip(t, f)
	if tr.pipe || tr.ctx.Value(ctxKey{}) != "mine" {
		t.Errorf("lone call: pipe %v, ctx value %v, want a plain command with the caller's context", tr.pipe, tr.ctx.Value(ctxKey{}))
	}
	f.finish <- struct{}{}
	c.wait(t)
	if got, err := c.cmd.Text(); err != nil || got != "a" {
		t.Errorf("reply = %q, %v, want %q", got, err, "a")
	}
	checkIdle(t, co)
}

func TestCoalesceQueueGoesOutAsOnePipeline(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	lone := saturate(t, co, f)

	const n = 10
	var queued []*call
	for i := 0; i < n; i++ {
		// One at a time, so the queue keeps the start order.
		queued = append(queued, enqueue(t, context.Background(), co, "q"+strconv.Itoa(i), i+1))
	}
	noTrip(t, f) // nothing more goes out while maxInFlight round trips run

	f.finish <- struct{}{} // one lone round trip ends: it hands on the queue
	tr := nextTrip(t, f)
	if !tr.pipe || len(tr.cmds) != n {
		t.Fatalf("next round trip: pipe %v with %d commands, want one pipeline of %d", tr.pipe, len(tr.cmds), n)
	}
	for i, c := range tr.cmds {
		if c != queued[i].cmd {
			t.Errorf("pipeline command %d = %v, want %v (queue order)", i, c.Args(), queued[i].cmd.Args())
		}
	}
	f.finishTrips(maxInFlight)
	for i, c := range append(lone, queued...) {
		c.wait(t)
		want := c.cmd.Args()[1]
		if got, err := c.cmd.Result(); err != nil || got != want {
			t.Errorf("call %d: reply %v, %v, want %v", i, got, err, want)
		}
	}
	noTrip(t, f)
	checkIdle(t, co)
}

func TestCoalesceCancelledWhileQueuedSendsNothing(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	lone := saturate(t, co, f)

	ctx, cancel := context.WithCancel(context.Background())
	c := enqueue(t, ctx, co, "cancelled", 1)
	cancel()
	c.wait(t)
	if !errors.Is(c.err, ErrNotSent) {
		t.Errorf("cancelled queued call: err %v, want ErrNotSent", c.err)
	}
	waitQueued(t, co, 0)
	f.finishTrips(maxInFlight)
	for _, l := range lone {
		l.wait(t)
	}
	noTrip(t, f) // the cancelled command never went out
	checkIdle(t, co)
}

func TestCoalesceSenderCancelledDoesNotFailTheOthers(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	lone := saturate(t, co, f)

	ctx, cancel := context.WithCancel(context.Background())
	first := enqueue(t, ctx, co, "first", 1)
	other := enqueue(t, context.Background(), co, "other", 2)

	f.finish <- struct{}{}
	tr := nextTrip(t, f)
	if !tr.pipe || len(tr.cmds) != 2 || tr.cmds[0] != first.cmd {
		t.Fatalf("next round trip: pipe %v, %d commands, want a pipeline of 2 led by the first queued call", tr.pipe, len(tr.cmds))
	}
	cancel() // the first caller gives up while its pipeline is on the wire
	first.wait(t)
	if !errors.Is(first.err, ErrAbandoned) {
		t.Errorf("first: err %v, want ErrAbandoned (returned at once, outcome unknown)", first.err)
	}
	f.finishTrips(maxInFlight)
	for _, c := range append(lone, other) {
		c.wait(t)
	}
	if got, err := other.cmd.Text(); other.err != nil || err != nil || got != "other" {
		t.Errorf("other: reply %q, %v, %v, want its reply: the others' round trip goes on", got, other.err, err)
	}
	checkIdle(t, co)
}

// TestCoalesceReturnsByTheDeadline: a caller whose command is on the wire
// of a round trip that does not end (a stalled server) returns when its
// context ends, with ErrAbandoned; the round trip, left by all its
// callers, is cancelled, so go-redis would send no retry of it.
func TestCoalesceReturnsByTheDeadline(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c := startCall(ctx, co, "stalled")
	tr := nextTrip(t, f)
	c.wait(t)
	if !errors.Is(c.err, ErrAbandoned) {
		t.Errorf("err = %v, want ErrAbandoned", c.err)
	}
	if tr.ctx.Err() == nil {
		t.Error("the round trip's context is not cancelled after its only caller left")
	}
	f.finishTrips(1)
	checkIdle(t, co)
}

// TestCoalesceBatchCap: a queue longer than maxBatch goes out in several
// pipelines of at most maxBatch commands.
func TestCoalesceBatchCap(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	lone := saturate(t, co, f)
	const n = maxBatch + 10
	var queued []*call
	for i := 0; i < n; i++ {
		queued = append(queued, startCall(context.Background(), co, "q"+strconv.Itoa(i)))
	}
	waitQueued(t, co, n)
	f.finish <- struct{}{}
	if tr := nextTrip(t, f); !tr.pipe || len(tr.cmds) != maxBatch {
		t.Fatalf("first pipeline: pipe %v with %d commands, want %d", tr.pipe, len(tr.cmds), maxBatch)
	}
	f.finish <- struct{}{}
	if tr := nextTrip(t, f); !tr.pipe || len(tr.cmds) != n-maxBatch {
		t.Fatalf("second pipeline: pipe %v with %d commands, want %d", tr.pipe, len(tr.cmds), n-maxBatch)
	}
	f.finishTrips(maxInFlight)
	for _, c := range append(lone, queued...) {
		c.wait(t)
	}
	checkIdle(t, co)
}

func TestCoalesceManyCallers(t *testing.T) {
	// Round trips finish as fast as the test can hand out tokens; every
	// caller must get its own reply and nothing may be left queued. (How
	// much is coalesced here depends on scheduling; the pipelines are
	// asserted in TestCoalesceQueueGoesOutAsOnePipeline and, on a real
	// server, in TestCoalescing.)
	f := newFakeClient()
	co := newCoalescer(f, nil)
	stop := make(chan struct{})
	var finisher sync.WaitGroup
	finisher.Add(1)
	trips, pipelined := 0, 0
	go func() {
		defer finisher.Done()
		for {
			select {
			case tr := <-f.started:
				trips++
				if tr.pipe {
					pipelined += len(tr.cmds)
				}
				f.finish <- struct{}{}
			case <-stop:
				return
			}
		}
	}()
	const callers, each = 32, 50
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for g := 0; g < callers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				want := strconv.Itoa(g) + "/" + strconv.Itoa(i)
				cmd := redis.NewCmd(context.Background(), "echo", want)
				_ = co.do(context.Background(), cmd)
				if got, err := cmd.Text(); err != nil || got != want {
					errs <- errors.New("got " + got + ", want " + want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	finisher.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d calls in %d round trips (%d in pipelines)", callers*each, trips, pipelined)
	checkIdle(t, co)
}

// TestCoalescePanickingClientLeavesNoOneStuck: a client that panics (a
// faulty hook, say) panics in the caller whose command led the round trip,
// the others in its pipeline get an error, and the coalescer keeps working.
func TestCoalescePanickingClientLeavesNoOneStuck(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)

	// A lone call.
	f.panicLone.Store(true)
	c := startCall(context.Background(), co, "lone")
	nextTrip(t, f)
	f.finish <- struct{}{}
	c.wait(t)
	if c.panicked == nil {
		t.Error("the lone call's panic was swallowed")
	}
	checkIdle(t, co)

	// A pipeline.
	lone := saturate(t, co, f)
	sender := enqueue(t, context.Background(), co, "sender", 1)
	other := enqueue(t, context.Background(), co, "other", 2)
	f.finish <- struct{}{} // a lone round trip ends and hands on the queue
	if tr := nextTrip(t, f); !tr.pipe || len(tr.cmds) != 2 {
		t.Fatalf("next round trip: pipe %v with %d commands, want the pipeline of 2", tr.pipe, len(tr.cmds))
	}
	f.panicPipe.Store(true)
	f.finishTrips(maxInFlight) // the pipeline and the other lone calls
	sender.wait(t)
	other.wait(t)
	if sender.panicked == nil {
		t.Error("the sender's panic was swallowed")
	}
	if other.panicked != nil || !errors.Is(other.cmd.Err(), errUnanswered) {
		t.Errorf("the other caller: panic %v, err %v; want errUnanswered", other.panicked, other.cmd.Err())
	}
	for _, l := range lone {
		l.wait(t)
	}
	checkIdle(t, co)

	// And it still works.
	c = startCall(context.Background(), co, "after")
	nextTrip(t, f)
	f.finish <- struct{}{}
	c.wait(t)
	if got, err := c.cmd.Text(); err != nil || got != "after" {
		t.Errorf("after the panics: reply %q, %v", got, err)
	}
	checkIdle(t, co)
}

// TestCoalesceFewCallsGoAlone: while at most maxInFlight calls are under
// way, each goes out alone from its caller's goroutine (a queued call's
// wake-up would cost what a pipeline of two saves); the next one queues.
func TestCoalesceFewCallsGoAlone(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	var calls []*call
	for i := 0; i < maxInFlight; i++ {
		calls = append(calls, startCall(context.Background(), co, "alone"+strconv.Itoa(i)))
		if tr := nextTrip(t, f); tr.pipe || len(tr.cmds) != 1 {
			t.Fatalf("call %d: pipe %v with %d commands, want a lone command", i, tr.pipe, len(tr.cmds))
		}
	}
	waitQueued(t, co, 0)
	queued := enqueue(t, context.Background(), co, "one more", 1)
	f.finishTrips(maxInFlight + 1)
	for _, c := range append(calls, queued) {
		c.wait(t)
		if got, err := c.cmd.Result(); err != nil || got != c.cmd.Args()[1] {
			t.Errorf("%v: reply %v, %v", c.cmd.Args(), got, err)
		}
	}
	checkIdle(t, co)
}

// TestCoalesceQueuedCallLeadsItsBatch: a queued call without a deadline
// sends its batch from its own goroutine, on its own context (no
// goroutine and no context are made for the round trip); a batch of
// calls that all have deadlines goes out from a goroutine of its own on a
// context that is cancelled when all of them leave.
func TestCoalesceQueuedCallLeadsItsBatch(t *testing.T) {
	f := newFakeClient()
	co := newCoalescer(f, nil)
	lone := saturate(t, co, f)
	leadCtx := context.WithValue(context.Background(), ctxKey{}, "leader")
	dl, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	withDeadline := enqueue(t, dl, co, "deadline", 1)
	leader := enqueue(t, leadCtx, co, "leader", 2)
	f.finish <- struct{}{}
	tr := nextTrip(t, f)
	if !tr.pipe || len(tr.cmds) != 2 {
		t.Fatalf("next round trip: pipe %v with %d commands, want a pipeline of 2", tr.pipe, len(tr.cmds))
	}
	if tr.ctx != leadCtx {
		t.Errorf("the pipeline went out on %v, want the leader's own context", tr.ctx)
	}
	f.finishTrips(len(lone)) // the pipeline and the other lone calls
	for _, c := range append(lone, withDeadline, leader) {
		c.wait(t)
		if got, err := c.cmd.Result(); err != nil || got != c.cmd.Args()[1] {
			t.Errorf("%v: reply %v, %v", c.cmd.Args(), got, err)
		}
	}
	checkIdle(t, co)

	// Only calls with deadlines: a round trip of their own.
	lone = saturate(t, co, f)
	alone := enqueue(t, dl, co, "deadline2", 1)
	f.finish <- struct{}{}
	tr = nextTrip(t, f)
	if tr.pipe || tr.ctx == dl || tr.ctx.Done() == nil {
		t.Errorf("a batch of deadline calls: pipe %v, want a lone command on a cancellable context of the round trip's own", tr.pipe)
	}
	f.finishTrips(len(lone))
	for _, c := range append(lone, alone) {
		c.wait(t)
	}
	checkIdle(t, co)
}

// TestCoalesceDeadlineCallsQueueFromFour: calls that cannot go out from
// their goroutines (a deadline before the client's bound) go out alone
// while at most four are under way; the fifth queues.
func TestCoalesceDeadlineCallsQueueFromFour(t *testing.T) {
	const alone = 4
	f := newFakeClient()
	co := newCoalescer(f, nil)
	dl, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var calls []*call
	for i := 0; i < alone; i++ {
		calls = append(calls, startCall(dl, co, "d"+strconv.Itoa(i)))
		nextTrip(t, f)
	}
	calls = append(calls, enqueue(t, dl, co, "queued", 1))
	f.finishTrips(alone + 1)
	for _, c := range calls {
		c.wait(t)
		if got, err := c.cmd.Result(); err != nil || got != c.cmd.Args()[1] {
			t.Errorf("%v: reply %v, %v", c.cmd.Args(), got, err)
		}
	}
	checkIdle(t, co)
}
