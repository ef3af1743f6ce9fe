// Gocron shows gocronlock on gocron v2 schedulers, in two parts:
//
//  1. A Locker: three instances with clocks 0, 200 and 400 ms apart run a
//     job every second. Each scheduled time runs once, on one instance,
//     with a fence; the others skip it.
//  2. An Elector: three instances campaign on one key, and only the leader
//     runs the jobs. The leader stops after a few runs and hands its term
//     to the next at once.
//
// It runs on an embedded Redis by default, or on REDIS_URL under a random
// prefix. It exits non-zero when a scheduled time runs twice or is
// missing, or when a job runs on an instance that does not lead.
//
//	make demo        # or: go run ./examples/gocron
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/gocron
package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
)

func main() { demorun.Main("gocron demo", run) }

// run runs the two parts and checks what they report.
func run(ctx context.Context, env *demorun.Env) error {
	defer keepTime(env)()
	fmt.Fprintf(env.Out, "\n== Part 1: each scheduled time runs once across instances (gocronlock.NewLocker) ==\n")
	runs, err := lockerPart(ctx, env, nil)
	if err != nil {
		return err
	}
	if err := checkOnce(env.Out, runs); err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "\n== Part 2: only the leader runs the jobs (gocronlock.NewElector) ==\n")
	return electorPart(ctx, env)
}

// keepTime makes the embedded Redis expire keys as a real one does:
// miniredis expires keys only when its clock is moved. It returns the
// function that stops it.
func keepTime(env *demorun.Env) (stop func()) {
	if env.Mini == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		const step = 10 * time.Millisecond
		t := time.NewTicker(step)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				env.Mini.FastForward(step)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// offsetClock is the real clock, offset: a machine whose clock is off.
type offsetClock struct {
	clockwork.Clock
	offset time.Duration
}

func (c offsetClock) Now() time.Time                  { return c.Clock.Now().Add(c.offset) }
func (c offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c offsetClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// syncWriter serialises writes to w, and drops them once muted.
type syncWriter struct {
	mu    sync.Mutex
	w     io.Writer
	muted bool
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.muted {
		return len(p), nil
	}
	return s.w.Write(p)
}

// mute drops what is written from now on: the instances' teardown.
func (s *syncWriter) mute() {
	s.mu.Lock()
	s.muted = true
	s.mu.Unlock()
}
