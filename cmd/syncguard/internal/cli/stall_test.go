package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestStalledServerEveryCommand: with Redis stopped (SIGSTOP), every
// command ends by --timeout with exit status 1 and one line that names
// the server and the timeout, rather than waiting out go-redis's own
// timeouts and retries (5 s a round trip with its default options; 10 s
// for a watch); so does a watch that was sampling when Redis stopped.
func TestStalledServerEveryCommand(t *testing.T) {
	t.Parallel() // its own redis-server; mostly waiting on it
	srv := redistest.Start(t)
	stallEveryCommand(t, srv.Client(t), []string{"--redis", urlOf(srv)}, srv.Pause, srv.Resume)
}

// TestStalledClusterEveryCommand is TestStalledServerEveryCommand on a
// Redis Cluster, every node stopped.
func TestStalledClusterEveryCommand(t *testing.T) {
	t.Parallel() // its own cluster; mostly waiting on it
	c := redistest.StartCluster(t)
	var seeds []string
	for _, a := range c.Addrs() {
		seeds = append(seeds, "--redis", "redis://"+a)
	}
	stallEveryCommand(t, c.Client(t), seeds, c.Pause, c.Resume)
}

// stallEveryCommand runs every command on the Redis of rdb, named by the
// flags redis, stopped by pause and continued by resume.
func stallEveryCommand(t *testing.T, rdb redis.UniversalClient, redisFlags []string, pause, resume func(t testing.TB)) {
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	if _, err := b.Acquire(context.Background(), "invoice:42", time.Minute); err != nil {
		t.Fatal(err)
	}
	const timeout, slack = 500 * time.Millisecond, time.Second
	common := append(redisFlags, "--prefix", p, "--timeout", timeout.String())

	// watch samples every 100 ms; it has printed a sample when Redis stops.
	sampled := make(chan struct{})
	out := &signalWriter{first: sampled}
	var watchErr bytes.Buffer
	watchEnd := make(chan int, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		env := Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: &watchErr, Getenv: func(string) string { return "" }}
		watchEnd <- Run(ctx, append([]string{"watch", "--interval", "100ms"}, common...), env)
	}()
	select {
	case <-sampled:
	case code := <-watchEnd:
		t.Fatalf("watch ended with %d before its first sample: %s", code, watchErr.String())
	}

	runs := [][]string{
		{"ls"},
		{"show", "invoice:42"},
		{"release", "--force", "--yes", "invoice:42"},
		{"doctor"},
		{"watch", "--interval", "100ms"},
	}
	// Each command also runs on a session connected before the stall, so
	// that its own commands, not the connection's check, meet it.
	type connected struct {
		inv *invocation
		s   *session
	}
	sessions := make([]connected, len(runs))
	for i, args := range runs {
		inv, err := parseArgs(append(args, common...))
		if err == nil {
			err = inv.cmd.check(inv.o, inv.pos)
		}
		if err != nil {
			t.Fatal(err)
		}
		env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
		s, err := connect(context.Background(), inv.o, env)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.close)
		sessions[i] = connected{inv, s}
	}

	pause(t)
	defer resume(t)
	stopped := time.Now()
	type outcome struct {
		r    result
		took time.Duration
	}
	got := make([]outcome, 2*len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Add(2)
		go func() {
			defer wg.Done()
			start := time.Now()
			r := syncguard(t, append(args, common...)...)
			got[i] = outcome{r, time.Since(start)}
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := sessions[i]
			start := time.Now()
			r := result{code: ExitOK}
			if err := c.inv.cmd.run(ctx, c.s, c.inv.o, c.inv.pos); err != nil {
				r = result{code: ExitFailure, err: message(err)}
			}
			got[len(runs)+i] = outcome{r, time.Since(start)}
		}()
	}
	wg.Wait()
	want := "did not answer within " + timeout.String() + " (--timeout)"
	for i, o := range got {
		what := "syncguard " + runs[i%len(runs)][0] + " started on a stopped server"
		if i >= len(runs) {
			what = "syncguard " + runs[i%len(runs)][0] + " connected before the stop"
		}
		if o.r.code != ExitFailure || !strings.Contains(o.r.err, want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", what, o.r.code, o.r.err, ExitFailure, want)
		}
		if o.took > timeout+slack {
			t.Errorf("%s took %v, want it to end by --timeout %v (+%v)", what, o.took.Round(time.Millisecond), timeout, slack)
		}
	}
	code := <-watchEnd
	took := time.Since(stopped)
	if code != ExitFailure || !strings.Contains(watchErr.String(), want) {
		t.Errorf("a watch sampling when Redis stopped: exit %d, stderr %q; want %d and %q", code, watchErr.String(), ExitFailure, want)
	}
	if took > timeout+slack {
		t.Errorf("a watch sampling when Redis stopped ended %v after, want by --timeout %v (+%v)", took.Round(time.Millisecond), timeout, slack)
	}
}

// signalWriter collects what is written to it and closes first at the
// first write.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 && len(p) > 0 {
		close(w.first)
	}
	return w.buf.Write(p)
}
