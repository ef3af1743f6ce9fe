package guardtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// recordKey is the lock key, and the record's key, of key sent by
// DefaultPrincipal to POST /orders in the replay scenarios.
const recordKey = ns + "POST /orders:" + DefaultPrincipal + ":" + key

// replayScenarios are the scenarios of replay mode; Run runs them with the
// others.
var replayScenarios = []scenario{
	{"replay: 100 retries after a 201 run the handler once", replaySequential},
	{"replay: a reused key with another body is 422, another route runs", replayMismatch},
	{"replay: 20 concurrent with a wait run once, 19 replays", replayConcurrent},
	{"replay: a 500 or a panic stores nothing", replayNoStore},
	{"replay: survives an application restart", replayRestart},
	{"replay: runs again after the replay TTL", replayExpiry},
	{"replay: a response over the limit is sent, marked, and never run again (20 sequential, 20 concurrent retries)", replayTooLarge},
	{"replay: a request body over the limit is 413", replayRequestTooLarge},
	{"replay: an unreadable record is 500, never replayed or run", replayBadRecord},
	{"replay: the fingerprint function tells requests apart", replayFingerprint},
}

// order is the replay scenarios' handler: it counts its runs, reads the
// body (which must arrive intact), and answers 201 with headers inside
// and outside the default allow-list and a body that is not text.
type order struct {
	runs atomic.Int32
	// status, when set, is the status of the next run (then cleared).
	status atomic.Int32
	// panics makes the next run panic.
	panics atomic.Bool
	// size, when set, is the body size of every answer.
	size int
}

func (o *order) handle(w http.ResponseWriter, r *http.Request, l lock.Lease, _ bool) {
	n := o.runs.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if o.panics.CompareAndSwap(true, false) {
		panic(errPanic)
	}
	if s := o.status.Swap(0); s != 0 {
		w.WriteHeader(int(s))
		fmt.Fprintf(w, "run %d failed", n)
		return
	}
	sum := sha256.Sum256(body)
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Location", fmt.Sprintf("/orders/%d", n))
	h.Set("ETag", `"`+string(l.Fence)+`"`)
	h.Add("Link", "</a>; rel=a")
	h.Add("Link", "</b>; rel=b")
	h.Set("Set-Cookie", "session=s3cr3t")
	h.Set("X-Run", fmt.Sprint(n))
	w.WriteHeader(http.StatusCreated)
	out := fmt.Appendf(nil, "run %d fence %s body %s \x00\xff\xfe", n, l.Fence, hex.EncodeToString(sum[:8]))
	if o.size > 0 {
		out = bytes.Repeat([]byte{'x'}, o.size)
	}
	_, _ = w.Write(out)
}

// checkReplay asserts rec is a replay of first: the same status, body and
// allow-listed headers, the replay header, and nothing outside the list.
func checkReplay(t *testing.T, rec, first *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != first.Code || !bytes.Equal(rec.Body.Bytes(), first.Body.Bytes()) {
		t.Errorf("replay: %d %q, want %d %q", rec.Code, rec.Body, first.Code, first.Body)
	}
	for _, name := range []string{"Content-Type", "Location", "Etag", "Link"} {
		if got, want := rec.Header()[name], first.Header()[name]; strings.Join(got, "|") != strings.Join(want, "|") || len(want) == 0 {
			t.Errorf("replay: %s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"Set-Cookie", "X-Run"} {
		if v, ok := rec.Header()[name]; ok {
			t.Errorf("replay: %s = %q, a header outside the allow-list", name, v)
		}
	}
	if got := rec.Header().Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("replay: Idempotent-Replayed = %q, want true", got)
	}
}

// checkFirst asserts rec is a first run's 201, not marked as a replay.
func checkFirst(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusCreated {
		t.Fatalf("first request: status %d (%q), want 201", rec.Code, rec.Body)
	}
	if v := rec.Header().Get("Idempotent-Replayed"); v != "" {
		t.Errorf("first request: Idempotent-Replayed = %q, want none", v)
	}
	if rec.Header().Get("Set-Cookie") == "" {
		t.Error("first request: Set-Cookie missing: the handler's own response must go out whole")
	}
}

func replaySequential(t *testing.T, a Adapter) {
	const retries = 100
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle})
	const body = `{"item":"book","qty":1}`
	first := send(h, "/orders", ptr(key), body)
	checkFirst(t, first)
	if want := "body " + hexSum(body); !strings.Contains(first.Body.String(), want) {
		t.Errorf("handler saw another body: answer %q, want %q in it", first.Body, want)
	}
	for i := range retries {
		rec := send(h, "/orders", ptr(key), body)
		checkReplay(t, rec, first)
		if t.Failed() {
			t.Fatalf("retry %d failed", i+1)
		}
	}
	if n := o.runs.Load(); n != 1 {
		t.Errorf("handler ran %d times for 1 + %d requests, want 1", n, retries)
	}
	// The record carries the fence of the run that produced it.
	raw, ok, err := e.b.Record(context.Background(), recordKey)
	if err != nil || !ok {
		t.Fatalf("Record = %v, %v", ok, err)
	}
	if bytes.Contains(raw, []byte("s3cr3t")) || bytes.Contains(raw, []byte("X-Run")) {
		t.Errorf("record %q holds headers outside the allow-list", raw)
	}
	if fence := first.Header().Get("Etag"); len(raw) < 19 || `"`+string(raw[4:19])+`"` != fence {
		t.Errorf("record fence %q, want the run's %s", raw[4:min(19, len(raw))], fence)
	}
}

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func replayMismatch(t *testing.T, a Adapter) {
	for _, unscoped := range []bool{false, true} {
		t.Run(fmt.Sprintf("unscoped=%v", unscoped), func(t *testing.T) {
			e := a.newEnv(t)
			var o order
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, NoRouteScope: unscoped, Routes: []string{"/orders", "/accounts"},
				Scope: Principal, Replay: &Replay{}, Handler: o.handle})
			first := send(h, "/orders", ptr(key), `{"qty":1}`)
			checkFirst(t, first)
			rec := send(h, "/orders", ptr(key), `{"qty":2}`)
			checkProblem(t, rec, http.StatusUnprocessableEntity, key)
			if n := o.runs.Load(); n != 1 {
				t.Errorf("handler ran %d times after a reused key, want 1", n)
			}
			// The same key and body on another route: a lock and a
			// record of its own, or, unscoped, another fingerprint.
			rec = send(h, "/accounts", ptr(key), `{"qty":1}`)
			if unscoped {
				checkProblem(t, rec, http.StatusUnprocessableEntity, key)
			} else if rec.Code != http.StatusCreated || rec.Header().Get("Idempotent-Replayed") != "" {
				t.Errorf("other route: status %d, replayed %q; want a run's 201", rec.Code, rec.Header().Get("Idempotent-Replayed"))
			}
			checkReplay(t, send(h, "/orders", ptr(key), `{"qty":1}`), first)
		})
	}
}

func replayConcurrent(t *testing.T, a Adapter) {
	const n = 20
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Wait: 5 * time.Second, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{},
		Handler: func(w http.ResponseWriter, r *http.Request, l lock.Lease, ok bool) {
			time.Sleep(50 * time.Millisecond) // the work, while the others wait
			o.handle(w, r, l, ok)
		}})
	recs := fire(n, func() *httptest.ResponseRecorder { return send(h, "/orders", ptr(key), "same") })
	var first *httptest.ResponseRecorder
	for _, rec := range recs {
		if rec.Header().Get("Idempotent-Replayed") == "" {
			if first != nil {
				t.Fatalf("two first runs: %d %q and %d %q", first.Code, first.Body, rec.Code, rec.Body)
			}
			first = rec
		}
	}
	if first == nil {
		t.Fatal("every answer is a replay")
	}
	checkFirst(t, first)
	for _, rec := range recs {
		if rec != first {
			checkReplay(t, rec, first)
		}
	}
	if got := o.runs.Load(); got != 1 {
		t.Errorf("handler ran %d times for %d concurrent requests, want 1", got, n)
	}
}

func replayNoStore(t *testing.T, a Adapter) {
	for _, fail := range []string{"500", "panic"} {
		t.Run(fail, func(t *testing.T) {
			e := a.newEnv(t)
			var o order
			if fail == "500" {
				o.status.Store(http.StatusInternalServerError)
			} else {
				o.panics.Store(true)
			}
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle})
			var rec *httptest.ResponseRecorder
			recovered := func() (v any) {
				defer func() { v = recover() }()
				rec = send(h, "/orders", ptr(key), "b")
				return nil
			}()
			switch {
			case fail == "panic" && !a.RecoversPanics:
				if recovered != errPanic {
					t.Fatalf("recovered %v, want the handler's panic", recovered)
				}
			case rec.Code != http.StatusInternalServerError:
				t.Fatalf("failing run: status %d, want 500", rec.Code)
			}
			if _, ok, err := e.b.Record(context.Background(), recordKey); ok || err != nil {
				t.Errorf("Record after a failed run = %v, %v; want none", ok, err)
			}
			first := send(h, "/orders", ptr(key), "b")
			checkFirst(t, first)
			checkReplay(t, send(h, "/orders", ptr(key), "b"), first)
			if n := o.runs.Load(); n != 2 {
				t.Errorf("handler ran %d times, want 2 (the failed run, then one)", n)
			}
		})
	}
}

func replayRestart(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var o order
	setup := Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle}
	first := send(a.Build(t, setup), "/orders", ptr(key), "b")
	checkFirst(t, first)
	// A new process: a new client, backend and middleware on the same
	// Redis and prefix, with nothing in memory from the first.
	b2, err := redisbackend.New(redistest.Shared(t).Client(t), &redisbackend.Options{Prefix: e.b.Prefix(), FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		t.Fatal(err)
	}
	setup.Backend = b2
	checkReplay(t, send(a.Build(t, setup), "/orders", ptr(key), "b"), first)
	if n := o.runs.Load(); n != 1 {
		t.Errorf("handler ran %d times across the restart, want 1", n)
	}
}

func replayExpiry(t *testing.T, a Adapter) {
	const ttl = 300 * time.Millisecond
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{TTL: ttl}, Handler: o.handle})
	first := send(h, "/orders", ptr(key), "b")
	checkFirst(t, first)
	checkReplay(t, send(h, "/orders", ptr(key), "b"), first)
	time.Sleep(ttl + 100*time.Millisecond)
	checkFirst(t, send(h, "/orders", ptr(key), "b"))
	if n := o.runs.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2 (once more after the replay TTL)", n)
	}
}

func replayTooLarge(t *testing.T, a Adapter) {
	const limit = 1000
	for _, size := range []int{limit, limit + 1} {
		t.Run(fmt.Sprint(size, " bytes"), func(t *testing.T) {
			e := a.newEnv(t)
			o := order{size: size}
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{MaxBody: limit}, Handler: o.handle})
			first := send(h, "/orders", ptr(key), "b")
			checkFirst(t, first)
			if first.Body.Len() != size {
				t.Errorf("first answer has %d bytes, want all %d", first.Body.Len(), size)
			}
			mark := first.Header().Get("Idempotent-Not-Stored")
			if size <= limit {
				if mark != "" {
					t.Errorf("Idempotent-Not-Stored = %q within the limit", mark)
				}
				checkReplay(t, send(h, "/orders", ptr(key), "b"), first)
				return
			}
			if mark != "response-too-large" {
				t.Errorf("Idempotent-Not-Stored = %q, want response-too-large", mark)
			}
			// Completed, not replayable: 20 retries one after another,
			// then 20 at once, all get 409 and none runs the handler.
			retries := make([]*httptest.ResponseRecorder, 0, 40)
			for range 20 {
				retries = append(retries, send(h, "/orders", ptr(key), "b"))
			}
			retries = append(retries, fire(20, func() *httptest.ResponseRecorder { return send(h, "/orders", ptr(key), "b") })...)
			for _, rec := range retries {
				checkProblem(t, rec, http.StatusConflict, key)
				if ra := rec.Header().Get("Retry-After"); ra != "" {
					t.Errorf("Retry-After = %q on a response that will never be stored", ra)
				}
			}
			if n := o.runs.Load(); n != 1 {
				t.Errorf("handler ran %d times for 1 + 40 requests, want 1: a completed request never runs again", n)
			}
		})
	}
}

func replayRequestTooLarge(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{MaxRequestBody: 10}, Handler: o.handle})
	checkProblem(t, send(h, "/orders", ptr(key), strings.Repeat("b", 11)), http.StatusRequestEntityTooLarge, key)
	checkFirst(t, send(h, "/orders", ptr(key), strings.Repeat("b", 10)))
	if n := o.runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}

func replayBadRecord(t *testing.T, a Adapter) {
	for _, value := range []string{"not a record", "SGR\x01" + "000000000000001", "SGR\x02future", "SGR\x03" + "000000000000001"} {
		t.Run(fmt.Sprintf("%q", value), func(t *testing.T) {
			e := a.newEnv(t)
			var o order
			h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal, Replay: &Replay{}, Handler: o.handle})
			// Foreign data where the record would be.
			l := hold(t, e, recordKey, 10*time.Second)
			if err := e.b.ReleaseRecord(context.Background(), l, []byte(value), time.Minute); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				checkProblem(t, send(h, "/orders", ptr(key), "b"), http.StatusInternalServerError, key)
			}
			if n := o.runs.Load(); n != 0 {
				t.Errorf("handler ran %d times over an unreadable record, want 0", n)
			}
		})
	}
}

func replayFingerprint(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var o order
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Handler: o.handle,
		Scope: Principal, Replay: &Replay{Fingerprint: func(r *http.Request) (string, error) { return r.Header.Get("X-Tenant"), nil }}})
	sendAs := func(tenant string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader("b"))
		req.Header.Set(Header, key)
		req.Header.Set("X-Tenant", tenant)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	first := sendAs("acme")
	checkFirst(t, first)
	checkReplay(t, sendAs("acme"), first)
	checkProblem(t, sendAs("umbrella"), http.StatusUnprocessableEntity, key)
	if n := o.runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}
