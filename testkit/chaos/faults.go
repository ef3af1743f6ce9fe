package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// injector applies faults to the Redis process and the workers' proxies.
// Its methods run on the test goroutine (redistest may call t.Fatal).
type injector struct {
	t       testing.TB
	srv     *redistest.Server
	proxies []*toxiproxy.Proxy
	probes  []*probe
	ttl     time.Duration
	rng     *rand.Rand
}

// fault is one kind of fault: run applies it and undoes it, taking about
// length(ttl).
type fault struct {
	name   string
	length func(ttl time.Duration) time.Duration
	run    func(in *injector)
}

func times(f float64) func(time.Duration) time.Duration {
	return func(ttl time.Duration) time.Duration { return time.Duration(f * float64(ttl)) }
}

// faults is the schedule, applied in turn. The two lost-reply faults come
// early so that the short run (10 s, in `go test`) has both.
var faults = []fault{
	{"redis restarted (AOF, fsync always)", times(1), func(in *injector) {
		in.srv.Restart(in.t)
	}},
	{"replies lost after execution (reset_peer on replies, 5 pulses of TTL/10)", times(1), func(in *injector) {
		// Downstream only: the command reaches Redis and runs; its reply
		// is swallowed and the connection closed, so go-redis sees EOF
		// (or a reset, on a connection opened during the pulse) and sends
		// the command again. Short pulses, so that most re-sends get
		// through: a re-sent command that succeeds is the case to test.
		for range 5 {
			in.toxic(`{"name":"replylost","type":"reset_peer","stream":"downstream","attributes":{"timeout":0}}`, in.ttl/10)
			time.Sleep(in.ttl / 10)
		}
	}},
	{"redis paused (SIGSTOP) for TTL/2", times(0.5), func(in *injector) {
		in.srv.Pause(in.t)
		time.Sleep(in.ttl / 2)
		in.srv.Resume(in.t)
	}},
	{"replies lost after execution (client drops 1 in 2 script replies) for 2x TTL", times(2), func(in *injector) {
		// The client half: the worker's connection reads the reply the
		// server sent and reports EOF instead (see probeConn).
		for _, p := range in.probes {
			p.dropOneIn.Store(2)
		}
		time.Sleep(2 * in.ttl)
		for _, p := range in.probes {
			p.dropOneIn.Store(0)
		}
	}},
	{"redis stopped for 2x TTL", times(3), func(in *injector) {
		in.srv.Stop(in.t)
		time.Sleep(2 * in.ttl)
		in.srv.Restart(in.t)
	}},
	{"redis paused (SIGSTOP) for 4x TTL", times(4), func(in *injector) {
		// Long enough that calls in flight when it starts outlive their
		// context's deadline by far more than DeadlineGrace unless the
		// backend bounds them by it (go-redis's own read timeout is 3 s).
		in.srv.Pause(in.t)
		time.Sleep(4 * in.ttl)
		in.srv.Resume(in.t)
	}},
	{"all connections cut (proxies down) for 1.5x TTL", times(1.5), func(in *injector) {
		in.cut(in.proxies, in.ttl*3/2)
	}},
	{"connections reset (reset_peer toxic) for TTL/2", times(0.5), func(in *injector) {
		in.toxic(`{"name":"reset","type":"reset_peer","stream":"upstream","attributes":{"timeout":0}}`, in.ttl/2)
	}},
	{"replies dropped (timeout toxic) for TTL, then connections closed", times(1), func(in *injector) {
		// toxiproxy's timeout toxic drops what it reads, and closes the
		// connection when removed: replies of commands that ran are lost.
		in.toxic(`{"name":"stall","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`, in.ttl)
	}},
	{"one worker partitioned (its proxy down) for 2x TTL", times(2), func(in *injector) {
		in.cut(in.proxies[in.rng.IntN(len(in.proxies)):][:1], 2*in.ttl)
	}},
	{"latency TTL/4 +- TTL/8 on replies for 2x TTL", times(2), func(in *injector) {
		ms := in.ttl.Milliseconds()
		in.toxic(fmt.Sprintf(`{"name":"latency","type":"latency","stream":"downstream","attributes":{"latency":%d,"jitter":%d}}`, ms/4, ms/8), 2*in.ttl)
	}},
}

// cut stops the proxies (closing their connections and refusing new ones)
// for d, then starts them again on the same addresses.
func (in *injector) cut(ps []*toxiproxy.Proxy, d time.Duration) {
	for _, p := range ps {
		p.Stop()
	}
	time.Sleep(d)
	for _, p := range ps {
		var err error
		for try := 0; try < 50; try++ {
			if err = p.Start(); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond) // the port may linger for a moment
		}
		if err != nil {
			in.t.Fatalf("chaos: restarting proxy %s: %v", p.Name, err)
		}
	}
}

// toxic adds the toxic (toxiproxy JSON) to every proxy for d.
func (in *injector) toxic(spec string, d time.Duration) { in.toxicOn(in.proxies, spec, d) }

// toxicOn adds the toxic (toxiproxy JSON) to the proxies ps for d.
func (in *injector) toxicOn(ps []*toxiproxy.Proxy, spec string, d time.Duration) {
	var name string
	for _, p := range ps {
		w, err := p.Toxics.AddToxicJson(strings.NewReader(spec))
		if err != nil {
			in.t.Fatalf("chaos: adding toxic %s: %v", spec, err)
		}
		name = w.Name
	}
	time.Sleep(d)
	for _, p := range ps {
		if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
			in.t.Fatalf("chaos: removing toxic %s: %v", name, err)
		}
	}
}

// faultNamed returns the fault of the schedule whose name starts with
// prefix; it panics when there is none (a renamed fault).
func faultNamed(prefix string) fault {
	for _, f := range faults {
		if strings.HasPrefix(f.name, prefix) {
			return f
		}
	}
	panic("chaos: no fault named " + prefix)
}

// inject applies the schedule's faults in turn, gap apart, each that
// fits before deadline, counting them by name in counts; it returns at
// deadline.
func (in *injector) inject(schedule []fault, gap time.Duration, deadline time.Time, counts map[string]int) {
	for i := 0; ; i++ {
		next := time.Now().Add(gap)
		if next.After(deadline) {
			next = deadline
		}
		sleepUntil(next)
		f := schedule[i%len(schedule)]
		if time.Now().Add(f.length(in.ttl)).After(deadline) {
			break
		}
		f.run(in)
		counts[f.name]++
	}
	sleepUntil(deadline)
}
