package guardtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// safetyScenarios are the scenarios of safe defaults: scopes, statuses,
// panics, trailers, hijacks, failed record writes and outages.
var safetyScenarios = []scenario{
	{"replay: two principals with one key and body each run once and never see the other's response", replayPrincipals},
	{"replay: no scope (unauthenticated) is 401, the handler does not run", replayNoScope},
	{"replay: 401 and 429 not stored, 201 and 404 stored, 500 only when asked", replayStatuses},
	{"replay: a panic after a 2xx write answers 500 and stores nothing", replayPanicAfterWrite},
	{"replay: a hijacked connection stores nothing", replayHijack},
	{"replay: a missing key is 400 before a large body is 413", replayMissingKeyFirst},
	{"replay: an http.MaxBytesError in front is 413", replayMaxBytesError},
	{"replay: a record write failing twice is retried; the next request replays", replayRecordRetried},
	{"replay: Redis stopped while the handler runs: it runs once, the first answer is marked", replayRedisStopped},
	{"limit: one limit on two routes admits n in all", limitAcrossRoutes},
}

// sendAs sends one POST to path with key, body and principal (none when
// "").
func sendAs(h http.Handler, principal, path, key, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set(Header, key)
	if principal != "" {
		req.Header.Set(PrincipalHeader, principal)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// byPrincipal is a handler that answers 201 with the principal and its
// run number, counting the runs of each principal.
type byPrincipal struct {
	mu   sync.Mutex
	runs map[string]int
}

func (b *byPrincipal) handle(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
	p, _ := Principal(r)
	_, _ = io.Copy(io.Discard, r.Body)
	b.mu.Lock()
	if b.runs == nil {
		b.runs = map[string]int{}
	}
	b.runs[p]++
	n := b.runs[p]
	b.mu.Unlock()
	time.Sleep(20 * time.Millisecond) // the work, while the other principal's request is in flight
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "order of %s, run %d", p, n)
}

func replayPrincipals(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var b byPrincipal
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Wait: 5 * time.Second, Routes: []string{"/orders"}, Scope: Principal,
		Replay: &Replay{}, Handler: b.handle})
	// Both at once, then each retries: one key, one body.
	var wg sync.WaitGroup
	first := map[string]*httptest.ResponseRecorder{}
	var mu sync.Mutex
	for _, p := range []string{"alice", "mallory"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := sendAs(h, p, "/orders", key, "same body")
			mu.Lock()
			first[p] = rec
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, p := range []string{"alice", "mallory"} {
		want := fmt.Sprintf("order of %s, run 1", p)
		if rec := first[p]; rec.Code != http.StatusCreated || rec.Body.String() != want {
			t.Errorf("%s's first answer: %d %q, want 201 %q", p, rec.Code, rec.Body, want)
		}
		for range 3 {
			rec := sendAs(h, p, "/orders", key, "same body")
			if rec.Code != http.StatusCreated || rec.Body.String() != want || rec.Header().Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s's retry: %d %q (replayed %q), want a replay of %q", p, rec.Code, rec.Body, rec.Header().Get("Idempotent-Replayed"), want)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs["alice"] != 1 || b.runs["mallory"] != 1 {
		t.Errorf("runs = %v, want each principal's handler once", b.runs)
	}
}

func replayNoScope(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle})
	before := e.cmds.Commands.Load()
	rec := sendAs(h, "-", "/orders", key, "b")
	checkProblem(t, rec, http.StatusUnauthorized, key)
	if n := o.runs.Load(); n != 0 {
		t.Errorf("handler ran %d times without a scope", n)
	}
	if n := e.cmds.Commands.Load() - before; n != 0 {
		t.Errorf("%d backend commands without a scope, want 0", n)
	}
}

func replayStatuses(t *testing.T, a Adapter) {
	tests := []struct {
		status   int
		errorsOK bool // store 5xx too
		stored   bool
	}{
		{http.StatusCreated, false, true},
		{http.StatusNotFound, false, true},
		{http.StatusUnauthorized, false, false},
		{http.StatusTooManyRequests, false, false},
		{http.StatusConflict, false, false},
		{http.StatusInternalServerError, false, false},
		{http.StatusInternalServerError, true, true},
		{http.StatusServiceUnavailable, true, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d errors=%v", tt.status, tt.errorsOK), func(t *testing.T) {
			e := a.newEnv(t)
			var runs atomic.Int32
			r := &Replay{}
			if tt.errorsOK {
				r.Statuses = func(s int) bool { return s >= 200 } // every final answer
			}
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: r,
				Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
					n := runs.Add(1)
					w.WriteHeader(tt.status)
					fmt.Fprintf(w, "run %d", n)
				}})
			first := send(h, "/orders", ptr(key), "b")
			if first.Code != tt.status {
				t.Fatalf("first: %d, want %d", first.Code, tt.status)
			}
			mark := first.Header().Get("Idempotent-Not-Stored")
			second := send(h, "/orders", ptr(key), "b")
			wantRuns := int32(2)
			if tt.stored {
				wantRuns = 1
				if mark != "" {
					t.Errorf("a stored response is marked Idempotent-Not-Stored: %q", mark)
				}
				if second.Header().Get("Idempotent-Replayed") != "true" || second.Body.String() != "run 1" || second.Code != tt.status {
					t.Errorf("second: %d %q, want a replay of run 1", second.Code, second.Body)
				}
			} else if mark != "status-not-stored" {
				t.Errorf("Idempotent-Not-Stored = %q, want status-not-stored", mark)
			}
			if n := runs.Load(); n != wantRuns {
				t.Errorf("handler ran %d times, want %d", n, wantRuns)
			}
		})
	}
}

// recoverer is a recovering middleware, as an application puts in front:
// a panic is answered 500 (nothing is written when the response is
// already out), but a panic with one of passed, which goes on.
func recoverer(next http.Handler, passed ...any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if slices.Contains(passed, v) {
					panic(v)
				}
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func replayPanicAfterWrite(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var runs atomic.Int32
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{},
		Front: func(h http.Handler) http.Handler { return recoverer(h) },
		Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
			n := runs.Add(1)
			w.Header().Set("Location", "/orders/1")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, "run %d", n)
			if n == 1 {
				panic(errPanic) // after the 2xx, before the work is done
			}
		}})
	rec := send(h, "/orders", ptr(key), "b")
	if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "run 1") || rec.Header().Get("Location") != "" {
		t.Errorf("a panic after writing 201: %d %q (Location %q), want 500 without the handler's output", rec.Code, rec.Body, rec.Header().Get("Location"))
	}
	if _, ok, err := e.b.Record(context.Background(), recordKey); ok || err != nil {
		t.Errorf("Record after a panic = %v, %v; want none", ok, err)
	}
	if rec := send(h, "/orders", ptr(key), "b"); rec.Code != http.StatusCreated || rec.Body.String() != "run 2" {
		t.Errorf("retry after the panic: %d %q, want a run's 201", rec.Code, rec.Body)
	}
}

func replayHijack(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var runs atomic.Int32
	// A wait: the client has the hijacked answer before the handler
	// returns and releases the key.
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Wait: 5 * time.Second, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{},
		Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
			runs.Add(1)
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("Hijack: %v", err)
				return
			}
			defer conn.Close()
			_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
			_ = rw.Flush()
		}})
	if a.proto.h2 {
		t.Skip("HTTP/2 has no connection to hijack: http.ErrNotSupported")
	}
	srv := a.server(t, h)
	for i := range 2 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader("b"))
		req.Header.Set(Header, key)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(body) != "hijacked" || res.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("request %d: %d %q, want the hijacked connection's own answer", i+1, res.StatusCode, body)
		}
	}
	if _, ok, err := e.b.Record(context.Background(), recordKey); ok || err != nil {
		t.Errorf("Record after a hijack = %v, %v; want none", ok, err)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2: nothing was stored to replay", n)
	}
}

func replayMissingKeyFirst(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{MaxRequestBody: 10}, Handler: o.handle})
	rec := send(h, "/orders", nil, strings.Repeat("b", 100))
	checkProblem(t, rec, http.StatusBadRequest, key)
}

func replayMaxBytesError(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle,
		Front: func(h http.Handler) http.Handler { return http.MaxBytesHandler(h, 10) }})
	checkProblem(t, send(h, "/orders", ptr(key), strings.Repeat("b", 100)), http.StatusRequestEntityTooLarge, key)
	if n := o.runs.Load(); n != 0 {
		t.Errorf("handler ran %d times over the server's body limit", n)
	}
}

// failRecords is a go-redis hook that fails the first n commands that
// carry a replay record, as a network failure would, before they reach
// Redis.
type failRecords struct {
	left   atomic.Int32
	failed atomic.Int32
}

func (f *failRecords) hit(cmd redis.Cmder) bool {
	for _, a := range cmd.Args() {
		if s, ok := a.(string); ok && strings.HasPrefix(s, "SGR") || isRecordBytes(a) {
			return f.left.Add(-1) >= 0
		}
	}
	return false
}

func isRecordBytes(a any) bool {
	b, ok := a.([]byte)
	return ok && bytes.HasPrefix(b, []byte("SGR"))
}

var errInjected = &net.OpError{Op: "write", Net: "tcp", Err: errors.New("injected: connection reset")}

func (f *failRecords) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *failRecords) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if f.hit(cmd) {
			f.failed.Add(1)
			cmd.SetErr(errInjected)
			return errInjected
		}
		return next(ctx, cmd)
	}
}

func (f *failRecords) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if f.hit(cmd) {
				f.failed.Add(1)
				for _, c := range cmds {
					c.SetErr(errInjected)
				}
				return errInjected
			}
		}
		return next(ctx, cmds)
	}
}

func replayRecordRetried(t *testing.T, a Adapter) {
	rdb := redistest.Shared(t).Client(t)
	hook := &failRecords{}
	hook.left.Store(2)
	rdb.AddHook(hook)
	e := newEnvOn(t, rdb)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle})
	first := send(h, "/orders", ptr(key), "b")
	if first.Code != http.StatusCreated {
		t.Fatalf("first: %d %q", first.Code, first.Body)
	}
	if got := first.Header().Get("Idempotent-Not-Stored"); got != "store-pending" {
		t.Errorf("first answer Idempotent-Not-Stored = %q, want store-pending (its record was not stored yet)", got)
	}
	// The release retries in the background: the record lands.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, err := e.b.Record(context.Background(), recordKey); ok && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record 10s after the first answer (%d writes failed)", hook.failed.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := hook.failed.Load(); n != 2 {
		t.Errorf("%d record writes failed, want 2", n)
	}
	rec := send(h, "/orders", ptr(key), "b")
	if rec.Header().Get("Idempotent-Replayed") != "true" || rec.Body.String() != first.Body.String() {
		t.Errorf("next request: %d %q, want a replay of the first", rec.Code, rec.Body)
	}
	if n := o.runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}

func replayRedisStopped(t *testing.T, a Adapter) {
	srv := redistest.Start(t, redistest.WithAOF())
	e := newEnvOn(t, srv.Client(t))
	var runs atomic.Int32
	inHandler := make(chan struct{})
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{},
		Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
			if runs.Add(1) == 1 {
				close(inHandler)
				time.Sleep(300 * time.Millisecond) // Redis stops meanwhile
			}
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, "order, run %d", runs.Load())
		}})
	firstDone := make(chan *httptest.ResponseRecorder, 1)
	go func() { firstDone <- send(h, "/orders", ptr(key), "b") }()
	<-inHandler
	srv.Pause(t) // SIGSTOP while the handler runs
	first := <-firstDone
	if first.Code != http.StatusCreated {
		t.Fatalf("first: %d %q", first.Code, first.Body)
	}
	if got := first.Header().Get("Idempotent-Not-Stored"); got != "store-pending" {
		t.Errorf("first answer Idempotent-Not-Stored = %q, want store-pending: it went out before its record was stored", got)
	}
	// A retry while Redis is still unreachable: 503, as for any request
	// the backend cannot serve; never a run.
	if rec := send(h, "/orders", ptr(key), "b"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("retry while Redis is stopped: %d %q, want 503", rec.Code, rec.Body)
	}
	srv.Resume(t)
	// Retries until one is answered by the record: busy (409) while the
	// key is still held, never a second run.
	deadline := time.Now().Add(20 * time.Second)
	for {
		rec := send(h, "/orders", ptr(key), "b")
		if rec.Header().Get("Idempotent-Replayed") == "true" {
			if rec.Body.String() != first.Body.String() {
				t.Errorf("replay %q, want the first run's %q", rec.Body, first.Body)
			}
			break
		}
		if rec.Code != http.StatusConflict && rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("retry: %d %q, want 409 or 503 until the record is stored, then the replay", rec.Code, rec.Body)
		}
		if time.Now().After(deadline) {
			t.Fatal("no replay 20s after Redis resumed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times across the outage, want 1", n)
	}
}

func limitAcrossRoutes(t *testing.T, a Adapter) {
	const n = 12
	e := a.newEnv(t)
	var g maxGauge
	release := newCloseOnce()
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Limit: limit, Routes: []string{"/exports", "/reports"},
		Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
			g.enter()
			defer g.leave()
			wait(release.ch, 10*time.Second)
			ok(w)
		}})
	var wg sync.WaitGroup
	var admitted, refused atomic.Int32
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := []string{"/exports", "/reports"}[i%2]
			rec := send(h, path, ptr(userA), "")
			switch rec.Code {
			case http.StatusOK:
				admitted.Add(1)
			case http.StatusTooManyRequests:
				if refused.Add(1) == n-limit {
					release.close()
				}
			default:
				t.Errorf("status %d %q", rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	release.close()
	if admitted.Load() != limit || g.peak.Load() > limit {
		t.Errorf("admitted %d (peak %d) over two routes, want %d in all", admitted.Load(), g.peak.Load(), limit)
	}
}
