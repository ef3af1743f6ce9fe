package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/examples/internal/demoredis"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The Elector part: the key, the term's TTL, and how many runs each
// leader makes before the demo goes on.
const (
	electorKey  = "scheduler:cleanup"
	termTTL     = 5 * time.Second
	runsPerTerm = 3
)

// member is one instance of the Elector part.
type member struct {
	name    string
	elector *gocronlock.Elector
	sched   gocron.Scheduler
}

// stop stops the Elector first, so the next instance leads at once, then
// the scheduler.
func (m *member) stop() {
	_ = m.elector.Stop()
	_ = m.sched.Shutdown()
}

// leaderRun is one run: by which instance, under which term.
type leaderRun struct {
	instance string
	term     lock.Fence
}

// electorPart starts the instances, stops the leader after runsPerTerm
// runs, and checks that the next term started at once and that no
// instance ran without leading.
func electorPart(ctx context.Context, env *demorun.Env) error {
	prefix := demoredis.Prefix("gocronlock-elector")
	fmt.Fprintf(env.Out, "Keys:  %s:*\n", prefix)
	w := &syncWriter{w: env.Out}
	observer, err := redisbackend.New(redis.NewClient(env.Redis.Options()), &redisbackend.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	leaders, err := election.Observe(octx, observer, electorKey)
	if err != nil {
		return err
	}
	runs := make(chan leaderRun, 64)
	var members []*member
	defer func() {
		w.mute()
		for _, m := range members {
			m.stop()
		}
	}()
	for i := range 3 {
		m, err := startMember(ctx, env.Redis, prefix, fmt.Sprintf("instance-%d", i+1), w, runs)
		if err != nil {
			return err
		}
		members = append(members, m)
	}
	first, err := waitLeader(ctx, leaders, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %s leads (term %s)\n", first.Identity, first.Fence)
	if err := waitRuns(ctx, runs, first); err != nil {
		return err
	}
	for _, m := range members {
		if m.name == first.Identity {
			fmt.Fprintf(w, "  stopping %s: it hands the term over\n", m.name)
			stopped := time.Now()
			go m.stop()
			next, err := waitLeader(ctx, leaders, first.Fence)
			if err != nil {
				return err
			}
			took := time.Since(stopped)
			fmt.Fprintf(w, "  %s leads (term %s), %v after the stop (the term's TTL is %v)\n", next.Identity, next.Fence, took.Round(time.Millisecond), termTTL)
			if took >= termTTL {
				return fmt.Errorf("the next term started %v after the stop: no hand-off", took)
			}
			return waitRuns(ctx, runs, next)
		}
	}
	return fmt.Errorf("the leader %q is none of the instances", first.Identity)
}

// startMember starts one instance: an Elector and a scheduler with the
// job "cleanup" every 300ms.
func startMember(ctx context.Context, rdb *redis.Client, prefix, name string, w io.Writer, runs chan<- leaderRun) (*member, error) {
	backend, err := redisbackend.New(redis.NewClient(rdb.Options()), &redisbackend.Options{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	e, err := gocronlock.NewElector(backend, electorKey, name, election.WithTTL(termTTL))
	if err != nil {
		return nil, err
	}
	if err := e.Start(ctx); err != nil {
		return nil, err
	}
	s, err := gocron.NewScheduler(gocron.WithDistributedElector(e))
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	_, err = s.NewJob(gocron.DurationJob(300*time.Millisecond), gocron.NewTask(func() {
		term, _ := e.Lease()
		fmt.Fprintf(w, "    %s ran cleanup (term %s)\n", name, term.Fence)
		runs <- leaderRun{name, term.Fence}
	}), gocron.WithName("cleanup"))
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	s.Start()
	return &member{name: name, elector: e, sched: s}, nil
}

// waitLeader returns the first leader observed with a term newer than
// after.
func waitLeader(ctx context.Context, leaders <-chan election.Leader, after lock.Fence) (election.Leader, error) {
	timeout := time.After(termTTL + 5*time.Second)
	for {
		select {
		case l := <-leaders:
			if l.Fence != "" && l.Fence.Compare(after) > 0 {
				return l, nil
			}
		case <-timeout:
			return election.Leader{}, fmt.Errorf("no leader after term %q", after)
		case <-ctx.Done():
			return election.Leader{}, ctx.Err()
		}
	}
}

// waitRuns waits for runsPerTerm runs under the term of l, and fails on
// a run by another instance or under another term.
func waitRuns(ctx context.Context, runs <-chan leaderRun, l election.Leader) error {
	timeout := time.After(5 * time.Second)
	for n := 0; n < runsPerTerm; {
		select {
		case r := <-runs:
			switch {
			case r.term == l.Fence && r.instance == l.Identity:
				n++
			case r.term.Compare(l.Fence) < 0:
				// A run of the previous term that started before it ended.
			default:
				return fmt.Errorf("%s ran under term %q while %s leads (term %s)", r.instance, r.term, l.Identity, l.Fence)
			}
		case <-timeout:
			return fmt.Errorf("%s did not run the job %d times within 5s", l.Identity, runsPerTerm)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
