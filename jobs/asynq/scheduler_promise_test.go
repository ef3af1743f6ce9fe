package asynqlock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/internal/wire"
	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock/election"
)

// startScheduler runs s until the returned function (or the test's end)
// stops it.
func startScheduler(t *testing.T, s *asynqlock.Scheduler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// replica is one Scheduler of a failover test and the ticks it reported.
type replica struct {
	s    *asynqlock.Scheduler
	got  ticks
	stop func()
}

// failover registers reg on two replicas of key, each with its own
// options, and starts both; the first replica to enqueue a tick calls
// first, then stops (its term goes to the other at once). It returns
// once the other replica enqueued a tick, with both replicas' ticks.
func failover(t *testing.T, e *env, key string, first func(), regs ...func(*asynqlock.Scheduler) error) []*replica {
	t.Helper()
	var once sync.Once
	rs := make([]*replica, 2)
	for i := range rs {
		s, err := asynqlock.NewScheduler(e.client, e.backend, key, "replica-"+strconv.Itoa(i), election.WithTTL(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := regs[i%len(regs)](s); err != nil {
			t.Fatal(err)
		}
		r := &replica{s: s}
		rs[i] = r
		s.OnTick(func(tk asynqlock.Tick) {
			r.got.add(tk)
			if tk.Err == nil && tk.Kind == asynqlock.TickEnqueue {
				once.Do(func() {
					first()
					go r.stop()
				})
			}
		})
	}
	for _, r := range rs {
		r.stop = startScheduler(t, r.s)
	}
	deadline := time.Now().Add(10 * time.Second)
	for both := 0; both < 2 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		both = 0
		for _, r := range rs {
			r.got.mu.Lock()
			for _, tk := range r.got.all {
				if tk.Err == nil && tk.Kind == asynqlock.TickEnqueue {
					both++
					break
				}
			}
			r.got.mu.Unlock()
		}
	}
	return rs
}

// checkOnce fails the test when a scheduled time was enqueued twice, by
// the replicas' reports and by the queue's task ids.
func checkOnce(t *testing.T, e *env, rs []*replica) {
	t.Helper()
	enqueued := map[string][]string{}
	for i, r := range rs {
		r.got.mu.Lock()
		for _, tk := range r.got.all {
			if tk.Err == nil && tk.Kind == asynqlock.TickEnqueue {
				enqueued[tk.TaskID] = append(enqueued[tk.TaskID], fmt.Sprintf("replica %d, term %s", i, tk.Fence))
			}
		}
		r.got.mu.Unlock()
	}
	if len(enqueued) < 2 {
		t.Errorf("%d scheduled times enqueued, want at least one per replica: %v", len(enqueued), enqueued)
	}
	for id, by := range enqueued {
		if len(by) > 1 {
			t.Errorf("tick %s was enqueued %d times: %v", id, len(by), by)
		}
	}
}

// TestSchedulerOnceWithoutRetention: a tick enqueued by one term is not
// enqueued again by the next, even when asynq no longer holds its task id
// (a retention too short for the spec's gaps, as with uneven specs): the
// entry's record holds it.
func TestSchedulerOnceWithoutRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	register := func(s *asynqlock.Scheduler) error {
		_, err := s.Register("@every 2s", asynq.NewTask("tick", nil), asynq.Queue(e.queue))
		return err
	}
	forget := func() { // asynq drops the ids of the completed tasks
		if _, err := e.insp.DeleteAllPendingTasks(e.queue); err != nil {
			t.Error(err)
		}
	}
	checkOnce(t, e, failover(t, e, "sched", forget, register))
}

// TestSchedulerOptionOrderAndEdit: replicas registering one entry with
// options in another order, or a new version adding an option, enqueue
// each scheduled time once across a failover.
func TestSchedulerOptionOrderAndEdit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task := asynq.NewTask("tick", []byte("p"))
	old := func(s *asynqlock.Scheduler) error {
		_, err := s.Register("@every 2s", task, asynq.Queue(e.queue), asynq.MaxRetry(1))
		return err
	}
	edited := func(s *asynqlock.Scheduler) error {
		_, err := s.Register("@every 2s", task, asynq.MaxRetry(5), asynq.Timeout(time.Minute), asynq.Queue(e.queue))
		return err
	}
	rs := failover(t, e, "sched", func() {}, old, edited)
	checkOnce(t, e, rs)
	tasks, err := e.insp.ListPendingTasks(e.queue, asynq.PageSize(1000))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, ti := range tasks {
		at := ti.ID[len(ti.ID)-len(time.RFC3339)+5:] // the scheduled time, as TickID writes it
		if other, dup := seen[at]; dup {
			t.Errorf("two tasks for the %s tick: %s and %s", at, other, ti.ID)
		}
		seen[at] = ti.ID
	}
}

// TestSchedulerFirstDeploy: an entry that never ran enqueues no past tick:
// a daily spec whose time passed a minute ago is first enqueued tomorrow.
func TestSchedulerFirstDeploy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().UTC().Add(-time.Minute)
	spec := fmt.Sprintf("%d %d * * *", past.Minute(), past.Hour())
	if _, err := s.Register(spec, asynq.NewTask("daily", nil), asynq.Queue(e.queue)); err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	startScheduler(t, s)
	time.Sleep(2 * time.Second)
	got.mu.Lock()
	defer got.mu.Unlock()
	for _, tk := range got.all {
		t.Errorf("%q: tick %v tried on a first deploy (catch-up %t, err %v)", spec, tk.At, tk.CatchUp, tk.Err)
	}
	if n := len(pending(t, e)); n != 0 {
		t.Errorf("%d tasks in the queue, want none", n)
	}
}

// pending lists the queue's pending tasks.
func pending(t *testing.T, e *env) []*asynq.TaskInfo {
	t.Helper()
	tasks, err := e.insp.ListPendingTasks(e.queue, asynq.PageSize(1000))
	if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
		t.Fatal(err)
	}
	return tasks
}

// TestSchedulerUnregisterBusyTerm: once Unregister returns, no tick of the
// entry due after it is enqueued, even by a term that was busy (here in
// OnTick) when it was called. Eight schedulers at once, each on its key.
func TestSchedulerUnregisterBusyTerm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var wg sync.WaitGroup
	for i := range 8 {
		s, err := asynqlock.NewScheduler(e.client, e.backend, "sched-"+strconv.Itoa(i), "replica", election.WithTTL(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		busy, err := s.Register("@every 1s", asynq.NewTask("busy", nil), asynq.Queue(e.queue))
		if err != nil {
			t.Fatal(err)
		}
		gone, err := s.Register("@every 1s", asynq.NewTask("gone", nil), asynq.Queue(e.queue))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var unregistered time.Time
		var once sync.Once
		wg.Add(1)
		s.OnTick(func(tk asynqlock.Tick) {
			mu.Lock()
			after := !unregistered.IsZero() && tk.At.After(unregistered)
			mu.Unlock()
			if tk.EntryID == gone && tk.Err == nil && after {
				t.Errorf("scheduler %d: the %v tick enqueued after Unregister returned", i, tk.At.Format(time.StampMilli))
			}
			if tk.EntryID != busy || tk.Err != nil {
				return
			}
			once.Do(func() {
				defer wg.Done()
				if err := s.Unregister(gone); err != nil {
					t.Error(err)
				}
				mu.Lock()
				unregistered = time.Now()
				mu.Unlock()
				time.Sleep(1500 * time.Millisecond) // the term is busy while ticks fall due
			})
		})
		startScheduler(t, s)
	}
	wg.Wait()
	time.Sleep(1500 * time.Millisecond) // the terms go on after their busy spell
}

// TestSchedulerOnTickPanic: a panic in OnTick is recovered: the term, and
// the ticks, go on (under a supervisor restarting Run, as an application
// might, none is needed).
func TestSchedulerOnTickPanic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(e.queue)); err != nil {
		t.Fatal(err)
	}
	s.OnTick(func(asynqlock.Tick) { panic("boom") })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // the supervisor
		defer close(done)
		for ctx.Err() == nil {
			func() {
				defer func() { _ = recover() }()
				_ = s.Run(ctx)
			}()
		}
	}()
	time.Sleep(4500 * time.Millisecond)
	cancel()
	<-done
	if n := len(pending(t, e)); n < 3 {
		t.Errorf("%d ticks enqueued in 4.5s of an @every 1s entry whose OnTick panics, want at least 3", n)
	}
}

// TestSchedulerEntriesDiffer: a replica whose entries differ from the
// last leader's reports each difference, when its Run starts and when it
// leads.
func TestSchedulerEntriesDiffer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task := asynq.NewTask("tick", nil)
	v1 := func(s *asynqlock.Scheduler) error {
		_, err := s.Register("@every 2s", task, asynq.Queue(e.queue), asynqlock.EntryName("report"))
		return err
	}
	v2 := func(s *asynqlock.Scheduler) error {
		if _, err := s.Register("@every 2s", task, asynq.Queue(e.queue), asynq.MaxRetry(2), asynqlock.EntryName("report")); err != nil {
			return err
		}
		_, err := s.Register("@every 4s", task, asynq.Queue(e.queue), asynqlock.EntryName("cleanup"))
		return err
	}
	rs := failover(t, e, "sched", func() {}, v1, v2)
	checkOnce(t, e, rs)
	differ := map[string]map[string]bool{}
	for i, r := range rs {
		r.got.mu.Lock()
		for _, tk := range r.got.all {
			if tk.Kind == asynqlock.TickEntriesDiffer {
				if !errors.Is(tk.Err, asynqlock.ErrEntriesDiffer) {
					t.Errorf("replica %d: a difference with error %v, want ErrEntriesDiffer", i, tk.Err)
				}
				if differ[tk.EntryID] == nil {
					differ[tk.EntryID] = map[string]bool{}
				}
				differ[tk.EntryID][tk.Err.Error()] = true
			}
		}
		r.got.mu.Unlock()
	}
	for _, id := range []string{"report", "cleanup"} {
		if len(differ[id]) == 0 {
			t.Errorf("entry %q: no difference reported (reported: %v)", id, differ)
		}
	}
}

// TestSchedulerLateTicksSignalled: ticks that fall due while the term
// cannot enqueue are coalesced into the latest one, whose Tick says how
// many were missed and how late it went out.
func TestSchedulerLateTicksSignalled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(e.queue)); err != nil {
		t.Fatal(err)
	}
	var got ticks
	var once sync.Once
	s.OnTick(func(tk asynqlock.Tick) {
		got.add(tk)
		once.Do(func() { time.Sleep(2500 * time.Millisecond) }) // a stall
	})
	startScheduler(t, s)
	ok := got.wait(t, 2, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })
	if late := ok[1]; late.Missed < 1 || late.Delay < 200*time.Millisecond || late.At.Sub(ok[0].At) < 2*time.Second {
		t.Errorf("the tick after a 2.5s stall: at %v (%v after the first), missed %d, delay %v; want at least 1 missed and a delay",
			late.At.Format(time.TimeOnly), late.At.Sub(ok[0].At), late.Missed, late.Delay)
	}
}

// TestSchedulerHandOffReportsWhatHappened: across graceful hand-offs the
// new term's catch-up finds the tick the old term just enqueued; it did
// nothing to it and reports nothing of it. Every tick a replica reports
// as enqueued is in the queue, once, and no tick is reported found
// already enqueued.
func TestSchedulerHandOffReportsWhatHappened(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	register := func(s *asynqlock.Scheduler) error {
		_, err := s.Register("@every 2s", asynq.NewTask("tick", nil), asynq.Queue(e.queue))
		return err
	}
	rs := failover(t, e, "sched", func() {}, register)
	checkOnce(t, e, rs)
	inQueue := map[string]bool{}
	for _, ti := range pending(t, e) {
		inQueue[ti.ID] = true
	}
	for i, r := range rs {
		r.got.mu.Lock()
		for _, tk := range r.got.all {
			switch {
			case tk.Kind != asynqlock.TickEnqueue:
			case errors.Is(tk.Err, asynq.ErrTaskIDConflict):
				t.Errorf("replica %d: tick %v reported found enqueued (catch-up %t, delay %v): no term ran into another here",
					i, tk.At.Format(time.TimeOnly), tk.CatchUp, tk.Delay)
			case tk.Err != nil:
				t.Errorf("replica %d: tick %v: %v", i, tk.At.Format(time.TimeOnly), tk.Err)
			case !inQueue[tk.TaskID]:
				t.Errorf("replica %d: tick %v reported enqueued, not in the queue", i, tk.At.Format(time.TimeOnly))
			}
		}
		r.got.mu.Unlock()
	}
}

// TestSchedulerFirstDeployThenNewTerm: a minute entry first deployed at
// :15 (its clock says) enqueues nothing of that minute; a new term at
// :17, before the next tick, finds the :00 tick in its catch-up window,
// recorded by the first term but never enqueued, and must not report it
// (as a catch-up found already enqueued, it would be counted "already").
// The first tick reported is the next minute's, enqueued, not a catch-up.
func TestSchedulerFirstDeployThenNewTerm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	minute := time.Now().UTC().Truncate(time.Minute)
	origin, start := minute.Add(15*time.Second), time.Now()
	const speed = 10 // the next tick, 45s of the clock away, is 4.5s away
	rs := make([]*replica, 2)
	var id string
	for i := range rs {
		s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica-"+strconv.Itoa(i), election.WithTTL(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		asynqlock.SetClock(s, origin, start, speed)
		if id, err = s.Register("* * * * *", asynq.NewTask("minutely", nil), asynq.Queue(e.queue)); err != nil {
			t.Fatal(err)
		}
		rs[i] = &replica{s: s}
		s.OnTick(rs[i].got.add)
	}
	rs[0].stop = startScheduler(t, rs[0].s)
	// The first term has recorded the entry: its first deploy is done.
	rec := e.backend
	key := "sched/entry/" + id
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, found, err := rec.Record(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first term wrote no record of the entry within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	rs[1].stop = startScheduler(t, rs[1].s)
	time.Sleep(100 * time.Millisecond) // the second replica campaigns
	rs[0].stop()                       // hands the term over: the new term starts at about :17
	next := minute.Add(time.Minute)
	ok := rs[1].got.wait(t, 1, 15*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })
	for i, r := range rs {
		r.got.mu.Lock()
		for _, tk := range r.got.all {
			if tk.Kind == asynqlock.TickEnqueue && !tk.At.Equal(next) {
				t.Errorf("replica %d: tick %v reported (catch-up %t, delay %v, err %v); the entry was first deployed at %v",
					i, tk.At.Format(time.TimeOnly), tk.CatchUp, tk.Delay, tk.Err, origin.Format(time.TimeOnly))
			}
		}
		r.got.mu.Unlock()
	}
	if tk := ok[0]; !tk.At.Equal(next) || tk.CatchUp {
		t.Errorf("first tick enqueued: %v (catch-up %t), want %v, not a catch-up", tk.At.Format(time.TimeOnly), tk.CatchUp, next.Format(time.TimeOnly))
	}
	if n := len(pending(t, e)); n != 1 {
		t.Errorf("%d tasks in the queue, want 1 (the %v tick)", n, next.Format(time.TimeOnly))
	}
}

// TestSchedulerCatchUpFoundEnqueued: a term that enqueued a tick and
// died before recording it leaves the task; the next term's catch-up
// finds its task id taken, records the tick, and reports nothing of it
// (nothing happened). The scheduler's clock starts half a second after a
// tick of "@every 10s", so that tick is the catch-up's, however slow the
// test's start.
func TestSchedulerCatchUpFoundEnqueued(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	task := asynq.NewTask("tick", nil)
	id, err := s.Register("@every 10s", task, asynq.Queue(e.queue))
	if err != nil {
		t.Fatal(err)
	}
	// The earlier term recorded a tick, then enqueued the next one.
	ctx := context.Background()
	key := "sched/entry/" + id
	latest := time.Now().Truncate(10 * time.Second)
	l, err := e.backend.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rec := wire.ScheduleTick{Fence: "000000000000000", Last: latest.Add(-10 * time.Second)}.Encode()
	if err := e.backend.ReleaseRecord(ctx, l, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Enqueue(task, asynq.Queue(e.queue), asynq.TaskID(asynqlock.TickID("sched", id, latest))); err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	asynqlock.SetClock(s, latest.Add(500*time.Millisecond), time.Now(), 1)
	startScheduler(t, s)
	// The catch-up is done when the record holds the tick.
	deadline := time.Now().Add(8 * time.Second)
	for {
		b, _, err := e.backend.Record(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := wire.DecodeScheduleTick(b); err == nil && r.Last.Equal(latest) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catch-up did not record the %v tick within 8s", latest.Format(time.TimeOnly))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a report comes right after the record: let it land
	got.mu.Lock()
	defer got.mu.Unlock()
	for _, tk := range got.all {
		t.Errorf("tick %v reported (catch-up %t, err %v, delay %v): the earlier term enqueued it", tk.At.Format(time.TimeOnly), tk.CatchUp, tk.Err, tk.Delay)
	}
	if n := len(pending(t, e)); n != 1 {
		t.Errorf("%d tasks in the queue, want the one the earlier term enqueued", n)
	}
}
