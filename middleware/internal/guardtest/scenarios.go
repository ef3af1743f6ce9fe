package guardtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// ns is the middleware key namespace of the scenarios, key their request
// key, and lk the lock key the middleware makes of it on the default
// route, "/" (Setup.Routes): the namespace, the route, "::" (no scope) and the key.
const (
	ns  = "orders:"
	key = "order-7f3a9c"
	lk  = ns + "POST /::" + key
)

// scenario is one behaviour of the suite, run against an adapter.
type scenario struct {
	desc string
	run  func(t *testing.T, a Adapter)
}

// scenarios is the suite. Each runs in parallel with the others, on its own
// key prefix.
var scenarios = []scenario{
	{"busy key without wait: one runs, 19 get 409", busyNoWait},
	{"busy key with wait: all run, one at a time", busyWait},
	{"different keys run in parallel", differentKeys},
	{"heartbeat keeps a 1s lease through a 3s handler", heartbeat},
	{"lost lease cancels the handler's context", leaseLost},
	{"client disconnect frees the key", clientDisconnect},
	{"handler panic frees the key and propagates", handlerPanic},
	{"invalid keys get 400 without a backend call", invalidKeys},
	{"backend down: 503, or the handler with fail-open", backendDown},
	{"Retry-After: a dead holder's expiry, else capped before any hold is measured", retryAfterFromHolder},
	{"wait gives up with 409 after the wait", waitGivesUp},
	{"custom busy and error responses", customResponses},
	{"the lease and its fence reach the handler", leaseReachable},
	{"skipper bypasses the lock", skipper},
	{"routes do not share keys unless unscoped", routeScope},
	{"Retry-After is capped by the route's hold time", retryAfterEstimate},
	{"round trips per request: lock 2, replay first run 2, replay hit 1, limit 2", roundTrips},
}

// Run runs every scenario against a, over HTTP/1.1 and over HTTP/2, and
// checks that a refuses bad input.
func Run(t *testing.T, a Adapter) {
	a.Build = func(t *testing.T, s Setup) http.Handler {
		t.Helper()
		h, err := a.New(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	t.Run("bad input is refused at construction", func(t *testing.T) {
		t.Parallel()
		badInput(t, a)
	})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			pa := a
			pa.proto, pa.raw = p, a.Build
			pa.Build = func(t *testing.T, s Setup) http.Handler { return serveRemote(t, a, p, s) }
			for _, sc := range slices.Concat(scenarios, replayScenarios, safetyScenarios, realServerScenarios, limitScenarios) {
				t.Run(sc.desc, func(t *testing.T) {
					t.Parallel()
					sc.run(t, pa)
				})
			}
		})
	}
}

// server returns a server of h on a's protocol: h's own when h is a
// Build result.
func (a Adapter) server(t *testing.T, h http.Handler) *httptest.Server {
	if rm, ok := h.(*remote); ok {
		return rm.srv
	}
	return a.proto.start(t, h)
}

func ok(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }

func busyNoWait(t *testing.T, a Adapter) {
	const n = 20
	e := a.newEnv(t)
	var g maxGauge
	allAnswered := newCloseOnce()
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		g.enter()
		defer g.leave()
		// Hold the key until every other request has been answered.
		if !wait(allAnswered.ch, 10*time.Second) {
			t.Error("the other requests were not all answered within 10s")
		}
		ok(w)
	}})
	recs := make([]*httptest.ResponseRecorder, n)
	var answered sync.WaitGroup
	var rejected int32
	var mu sync.Mutex
	start := make(chan struct{})
	for i := range n {
		answered.Add(1)
		go func() {
			defer answered.Done()
			<-start
			rec := serve(h, ptr(key))
			recs[i] = rec
			if rec.Code != http.StatusOK {
				mu.Lock()
				rejected++
				if rejected == n-1 {
					allAnswered.close()
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	answered.Wait()
	allAnswered.close()

	var okCount int
	for _, rec := range recs {
		if rec.Code == http.StatusOK {
			okCount++
			continue
		}
		checkProblem(t, rec, http.StatusConflict, key)
		checkRetryAfter(t, rec, 1, int(guard.DefaultTTL/time.Second))
	}
	if okCount != 1 || rejected != n-1 {
		t.Errorf("got %d x 200 and %d rejected, want 1 and %d", okCount, rejected, n-1)
	}
	if p := g.peak.Load(); p != 1 {
		t.Errorf("peak concurrency = %d, want 1", p)
	}
}

func busyWait(t *testing.T, a Adapter) {
	const n = 20
	e := a.newEnv(t)
	var g maxGauge
	var mu sync.Mutex
	fences := map[lock.Fence]bool{}
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Wait: 5 * time.Second, Handler: func(w http.ResponseWriter, r *http.Request, l lock.Lease, _ bool) {
		g.enter()
		defer g.leave()
		mu.Lock()
		fences[l.Fence] = true
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // the work
		ok(w)
	}})
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = serve(h, ptr(key)).Code
		}()
	}
	close(start)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: status %d, want 200", i, c)
		}
	}
	if p := g.peak.Load(); p != 1 {
		t.Errorf("peak concurrency = %d, want 1", p)
	}
	if len(fences) != n {
		t.Errorf("handlers saw %d distinct fences, want %d", len(fences), n)
	}
}

func differentKeys(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var g maxGauge
	both := newCloseOnce()
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		if g.enter() >= 2 {
			both.close()
		}
		defer g.leave()
		wait(both.ch, 5*time.Second) // a barrier: both handlers inside at once
		ok(w)
	}})
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, k := range []string{"order-a", "order-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = serve(h, ptr(k)).Code
		}()
	}
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Errorf("statuses %v, want both 200", codes)
	}
	if p := g.peak.Load(); p < 2 {
		t.Errorf("peak concurrency over two keys = %d, want 2", p)
	}
}

func heartbeat(t *testing.T, a Adapter) {
	const ttl = time.Second
	const hold = 3 * time.Second
	e := a.newEnv(t)
	entered := newCloseOnce()
	release := make(chan struct{})
	var cause error
	var runs atomic.Int32
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, TTL: ttl, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		if runs.Add(1) > 1 {
			ok(w) // a contender got in (the lease was lost): answer, so the loop reports it instead of hanging
			return
		}
		entered.close()
		<-release
		cause = context.Cause(r.Context())
		ok(w)
	}})
	first := make(chan int)
	go func() { first <- serve(h, ptr(key)).Code }()
	if !wait(entered.ch, 5*time.Second) {
		close(release)
		t.Fatal("the first request did not reach its handler")
	}
	// Contenders during three TTLs: the heartbeat must keep every one out.
	var tries, got int
	for deadline := time.Now().Add(hold); time.Now().Before(deadline); tries++ {
		rec := serve(h, ptr(key))
		if rec.Code != http.StatusConflict {
			t.Errorf("contender %d after %v: status %d, want 409", tries, time.Until(deadline), rec.Code)
			continue
		}
		got++
		checkRetryAfter(t, rec, 1, int(ttl/time.Second))
		time.Sleep(100 * time.Millisecond)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("holder: status %d, want 200", code)
	}
	if cause != nil {
		t.Errorf("holder's context ended with %v, want still live", cause)
	}
	if got < 10 {
		t.Errorf("only %d contenders answered in %v", got, hold)
	}
}

func leaseLost(t *testing.T, a Adapter) {
	const ttl = 1500 * time.Millisecond
	e := a.newEnv(t)
	entered := newCloseOnce()
	type outcome struct {
		at    time.Time
		cause error
	}
	done := make(chan outcome, 1)
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, TTL: ttl, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		entered.close()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		done <- outcome{time.Now(), context.Cause(r.Context())}
		ok(w)
	}})
	go serve(h, ptr(key))
	if !wait(entered.ch, 5*time.Second) {
		t.Fatal("the request did not reach its handler")
	}
	deleted := time.Now()
	if n, err := e.rdb.Del(context.Background(), e.lockKey(lk)).Result(); err != nil || n != 1 {
		t.Fatalf("DEL %s = %d, %v; want 1", e.lockKey(lk), n, err)
	}
	o := <-done
	// ErrNotHeld: the heartbeat found the lease gone; a lease that merely
	// ran out by the local clock would not say so.
	if !errors.Is(o.cause, lock.ErrLeaseLost) || !errors.Is(o.cause, lock.ErrNotHeld) {
		t.Errorf("context.Cause = %v, want lock.ErrLeaseLost from lock.ErrNotHeld", o.cause)
	}
	// The heartbeat runs every ttl/3; allow for a round trip and a busy
	// machine on top, still well under the TTL.
	if lag, limit := o.at.Sub(deleted), ttl/3+700*time.Millisecond; lag > limit {
		t.Errorf("handler cancelled %v after the DEL, want within %v", lag, limit)
	}
}

func clientDisconnect(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	entered := newCloseOnce()
	sawCancel := make(chan bool, 1)
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		entered.close()
		select {
		case <-r.Context().Done():
			sawCancel <- true
		case <-time.After(5 * time.Second):
			sawCancel <- false
		}
	}})
	srv := a.server(t, h)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(Header, key)
	clientDone := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		clientDone <- err
	}()
	if !wait(entered.ch, 5*time.Second) {
		t.Fatal("the request did not reach its handler")
	}
	if !e.isLocked(t, lk) {
		t.Fatal("key not locked while the handler runs")
	}
	cancel()
	if err := <-clientDone; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v, want context.Canceled", err)
	}
	if !<-sawCancel {
		t.Error("the handler's context was not cancelled when the client hung up")
	}
	// Free right after, not at the 30s TTL.
	for deadline := time.Now().Add(time.Second); e.isLocked(t, lk); {
		if time.Now().After(deadline) {
			t.Fatal("key still locked 1s after the client hung up")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// errPanic is the value the panicking handler panics with.
var errPanic = errors.New("guardtest: handler panic")

func handlerPanic(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, ok bool) {
		if !ok {
			t.Error("no lease in the panicking handler")
		}
		panic(errPanic)
	}})
	var rec *httptest.ResponseRecorder
	recovered := func() (v any) {
		defer func() { v = recover() }()
		rec = serve(h, ptr(key))
		return nil
	}()
	switch {
	case a.RecoversPanics:
		if recovered != nil {
			t.Errorf("panic %v escaped a stack with a recover middleware", recovered)
		} else if rec.Code != http.StatusInternalServerError {
			t.Errorf("status %d, want 500 from the recover middleware", rec.Code)
		}
	case recovered != errPanic:
		t.Errorf("recovered %v, want the handler's panic %v", recovered, errPanic)
	}
	if e.isLocked(t, lk) {
		t.Error("key still locked after the handler panicked")
	}
}

func invalidKeys(t *testing.T, a Adapter) {
	tests := []struct {
		desc   string
		prefix string
		key    *string
	}{
		{desc: "missing header", prefix: ns},
		{desc: "empty header", prefix: ns, key: ptr("")},
		{desc: "513 bytes", prefix: "", key: ptr(strings.Repeat("k", lockdriver.MaxKeyBytes+1))},
		{desc: "512 bytes plus the namespace", prefix: ns, key: ptr(strings.Repeat("k", lockdriver.MaxKeyBytes))},
		{desc: "invalid UTF-8", prefix: ns, key: ptr("order-\xff\xfe")},
	}
	e := a.newEnv(t)
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			b := &countingBackend{Backend: e.b}
			h := a.Build(t, Setup{Backend: b, Prefix: tt.prefix, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
				t.Error("handler ran for an invalid key")
				ok(w)
			}})
			before := e.cmds.Commands.Load()
			rec := serve(h, tt.key)
			k := ""
			if tt.key != nil {
				k = *tt.key
			}
			checkProblem(t, rec, http.StatusBadRequest, k)
			if n := e.cmds.Commands.Load() - before; n != 0 {
				t.Errorf("%d Redis commands sent, want 0", n)
			}
			if n := b.acquires.Load(); n != 0 {
				t.Errorf("backend Acquire called %d times, want 0: the middleware must reject the key itself", n)
			}
		})
	}
	// A key the backend reserves ("id:<lock id>", "fence:...") is an
	// ordinary key behind the middleware: the route and scope fields come
	// first, so a client can never name an internal key.
	t.Run("reserved name is an ordinary key", func(t *testing.T) {
		h := a.Build(t, Setup{Backend: e.b, NoRouteScope: true, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) { ok(w) }})
		if rec := serve(h, ptr("id:0123456789abcdefghijkl")); rec.Code != http.StatusOK {
			t.Errorf("status %d, want 200", rec.Code)
		}
	})
	t.Run("valid key, as a control", func(t *testing.T) {
		b := &countingBackend{Backend: e.b}
		h := a.Build(t, Setup{Backend: b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) { ok(w) }})
		before := e.cmds.Commands.Load()
		if rec := serve(h, ptr(key)); rec.Code != http.StatusOK {
			t.Errorf("status %d, want 200", rec.Code)
		}
		if n := e.cmds.Commands.Load() - before; n == 0 || b.acquires.Load() != 1 {
			t.Errorf("%d Redis commands and %d Acquire calls for a valid key, want some and 1: the counters are broken", n, b.acquires.Load())
		}
	})
}

func backendDown(t *testing.T, a Adapter) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv.Client(t, func(o *redis.Options) {
		o.MaxRetries = -1
		o.DialTimeout = 500 * time.Millisecond
	}))
	srv.Stop(t)
	for _, failOpen := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail-open=%v", failOpen), func(t *testing.T) {
			ran, hadLease := false, false
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, FailOpen: failOpen, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, ok bool) {
				ran, hadLease = true, ok
				w.WriteHeader(http.StatusOK)
			}})
			rec := serve(h, ptr(key))
			if !failOpen {
				checkProblem(t, rec, http.StatusServiceUnavailable, key)
				if ran {
					t.Error("handler ran with the backend down and fail-closed")
				}
				return
			}
			if rec.Code != http.StatusOK || !ran {
				t.Errorf("status %d, handler ran %v; want 200 and true", rec.Code, ran)
			}
			if hadLease {
				t.Error("LeaseFrom reported a lease with the backend down")
			}
		})
	}
}

// hold takes the lock on k directly for ttl and releases it in cleanup.
func hold(t *testing.T, e *env, k string, ttl time.Duration) lock.Lease {
	t.Helper()
	l, err := e.b.Acquire(context.Background(), k, ttl)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	t.Cleanup(func() { _ = e.b.Release(context.Background(), l.ID) })
	return l
}

func retryAfterFromHolder(t *testing.T, a Adapter) {
	tests := []struct {
		desc     string
		ttl      time.Duration // the holder's lease, never extended
		min, max int
	}{
		// Under half the middleware's 30s TTL: not being extended, a dead
		// holder; the key frees at its expiry.
		{"dead holder: its time left", 10 * time.Second, 9, 10},
		// As a live holder's: no hold time measured yet on this route, so
		// the cap, not the whole lease.
		{"live holder, nothing measured: the cap", 30 * time.Second, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			e := a.newEnv(t)
			hold(t, e, lk, tt.ttl)
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
				t.Error("handler ran on a held key")
			}})
			rec := serve(h, ptr(key))
			checkProblem(t, rec, http.StatusConflict, key)
			checkRetryAfter(t, rec, tt.min, tt.max)
		})
	}
}

func waitGivesUp(t *testing.T, a Adapter) {
	const w = 300 * time.Millisecond
	e := a.newEnv(t)
	hold(t, e, lk, 10*time.Second)
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Wait: w, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		t.Error("handler ran on a held key")
	}})
	before := e.cmds.Commands.Load()
	start := time.Now()
	rec := serve(h, ptr(key))
	if elapsed := time.Since(start); elapsed < w {
		t.Errorf("answered after %v, want after the %v wait", elapsed, w)
	}
	checkProblem(t, rec, http.StatusConflict, key)
	checkRetryAfter(t, rec, 9, 10)
	// With retries at most 50ms apart, a 300ms wait makes several attempts.
	if n := e.cmds.Commands.Load() - before; n < 4 {
		t.Errorf("%d Redis commands during the wait, want several attempts", n)
	}
}

func customResponses(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	hold(t, e, lk, 10*time.Second)
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Custom: true, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		t.Error("handler ran")
	}})
	rec := serve(h, ptr(key))
	ra := rec.Header().Get("X-Custom-Retry-After")
	if rec.Code != CustomBusyStatus || (ra != "9" && ra != "10") || rec.Header().Get("X-Custom-Locked") != "true" {
		t.Errorf("busy: status %d, headers %v; want %d with the retry-after and the lock error", rec.Code, rec.Header(), CustomBusyStatus)
	}
	rec = serve(h, nil)
	if rec.Code != CustomErrorStatus || rec.Header().Get("X-Custom-Code") != string(lock.CodeInvalidArgument) {
		t.Errorf("missing key: status %d, headers %v; want %d with code InvalidArgument", rec.Code, rec.Header(), CustomErrorStatus)
	}
}

func leaseReachable(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var got lock.Lease
	var gotOK bool
	var info *lock.Info
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, l lock.Lease, ok bool) {
		got, gotOK = l, ok
		var err error
		if info, err = e.b.LookupKey(r.Context(), lk); err != nil {
			t.Errorf("LookupKey: %v", err)
		}
		w.WriteHeader(http.StatusOK)
	}})
	if rec := serve(h, ptr(key)); rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200", rec.Code)
	}
	if !gotOK || got.Key != lk || got.ID == "" || got.Fence == "" {
		t.Fatalf("LeaseFrom = %+v, %v; want the lease on %q with a fence", got, gotOK, lk)
	}
	if info == nil || info.Fence != got.Fence {
		t.Errorf("lock on the backend = %+v, want fence %s", info, got.Fence)
	}
	if e.isLocked(t, lk) {
		t.Error("key still locked after the handler returned")
	}
}

func skipper(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var hadLease, ran bool
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns,
		Skip: func(r *http.Request) bool { return r.Header.Get("X-Skip") == "1" },
		Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, ok bool) {
			ran, hadLease = true, ok
			w.WriteHeader(http.StatusOK)
		}})
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("X-Skip", "1") // and no key: a skipped request needs none
	rec := httptest.NewRecorder()
	before := e.cmds.Commands.Load()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !ran || hadLease {
		t.Errorf("skipped: status %d, ran %v, lease %v; want 200, true, false", rec.Code, ran, hadLease)
	}
	if n := e.cmds.Commands.Load() - before; n != 0 {
		t.Errorf("%d Redis commands for a skipped request, want 0", n)
	}
	if rec := serve(h, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("not skipped, no key: status %d, want 400", rec.Code)
	}
}

// routeScope: by default the same key on two routes is two locks; with
// Unscoped, one.
func routeScope(t *testing.T, a Adapter) {
	for _, unscoped := range []bool{false, true} {
		t.Run(fmt.Sprintf("unscoped=%v", unscoped), func(t *testing.T) {
			e := a.newEnv(t)
			entered := newCloseOnce()
			release := make(chan struct{})
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, NoRouteScope: unscoped, Routes: []string{"/orders", "/accounts"},
				Handler: func(w http.ResponseWriter, r *http.Request, l lock.Lease, _ bool) {
					if r.URL.Path == "/orders" {
						entered.close()
						<-release
					}
					ok(w)
				}})
			first := make(chan int)
			go func() { first <- send(h, "/orders", ptr(key), "").Code }()
			if !wait(entered.ch, 5*time.Second) {
				close(release)
				t.Fatal("the first request did not reach its handler")
			}
			other := send(h, "/accounts", ptr(key), "")
			close(release)
			if code := <-first; code != http.StatusOK {
				t.Errorf("/orders: status %d, want 200", code)
			}
			want := http.StatusOK
			if unscoped {
				want = http.StatusConflict
			}
			if other.Code != want {
				t.Errorf("/accounts with the key held on /orders: status %d, want %d", other.Code, want)
			}
		})
	}
}

// retryAfterEstimate: after short runs on a route, a request that finds
// the key busy is told to retry in 1 s, not in the holder's 30 s.
func retryAfterEstimate(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	entered := newCloseOnce()
	release := make(chan struct{})
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		if r.Header.Get(Header) == key {
			entered.close()
			<-release
		}
		ok(w)
	}})
	for i := range 3 { // short runs on other keys: the route's hold time
		if rec := serve(h, ptr(fmt.Sprint("warm-", i))); rec.Code != http.StatusOK {
			t.Fatalf("warm-up: status %d", rec.Code)
		}
	}
	first := make(chan int)
	go func() { first <- serve(h, ptr(key)).Code }()
	if !wait(entered.ch, 5*time.Second) {
		close(release)
		t.Fatal("the holder did not reach its handler")
	}
	rec := serve(h, ptr(key))
	close(release)
	<-first
	checkProblem(t, rec, http.StatusConflict, key)
	checkRetryAfter(t, rec, 1, 1)
}
