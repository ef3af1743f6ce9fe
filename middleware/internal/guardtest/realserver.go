package guardtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// The scenarios here run over a real HTTP server (httptest.NewServer), not
// a ResponseRecorder: Content-Length, chunking, trailers and aborted
// connections are net/http's, as a client sees them.
var realServerScenarios = []scenario{
	{"replay over a real server: principals equal after Unicode normalisation stay apart", realPrincipalsNFC},
	{"replay over a real server: a scoped and a public middleware on one prefix never share a key", realScopedAndPublic},
	{"replay over a real server: every trailer idiom answers as net/http does, and replays allow-listed", trailersAsNetHTTP},
	{"replay over a real server: a large response whose status is not stored is marked status-not-stored", realLargeNotStored},
	{"replay over a real server: a panic after the response started aborts the connection", realPanicAfterStart},
}

// answer is a response as a client read it.
type answer struct {
	status  int
	header  http.Header
	trailer http.Header
	body    string
	err     error // reading the body failed (an aborted connection)
}

// post sends one POST with key (and principal unless "") to srv and reads
// the whole answer.
func post(t *testing.T, srv *httptest.Server, path, key, principal, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(Header, key)
	if principal != "" {
		req.Header.Set(PrincipalHeader, principal)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, trailer: res.Trailer, body: string(b), err: err}
}

func realPrincipalsNFC(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var b byPrincipal
	srv := a.server(t, a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal,
		Replay: &Replay{}, Handler: b.handle}))
	for _, p := range []string{"\u00e9", "e\u0301"} { // canonically equivalent, two identities
		got := post(t, srv, "/orders", key, p, "b")
		if got.status != http.StatusCreated || got.header.Get("Idempotent-Replayed") != "" || !strings.Contains(got.body, "of "+p+", run 1") {
			t.Errorf("principal %q: %d %q (replayed %q), want its own first run", p, got.status, got.body, got.header.Get("Idempotent-Replayed"))
		}
	}
}

func realScopedAndPublic(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	var b byPrincipal
	// One prefix and route: alice's key "k", and an anonymous key "alice:k"
	// that names the same parts when an absent scope is left out.
	scoped := a.server(t, a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Scope: Principal,
		Replay: &Replay{}, Handler: b.handle}))
	public := a.server(t, a.Build(t, Setup{Backend: e.b, Prefix: ns, Routes: []string{"/orders"}, Public: true,
		Replay: &Replay{}, Handler: b.handle}))
	first := post(t, scoped, "/orders", "k", "alice", "b")
	other := post(t, public, "/orders", DefaultPrincipal+":k", "", "b")
	if first.status != http.StatusCreated || other.status != http.StatusCreated {
		t.Fatalf("statuses %d and %d, want two first runs' 201", first.status, other.status)
	}
	if other.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the public key %q was served alice's stored response %q", DefaultPrincipal+":k", other.body)
	}
}

func realLargeNotStored(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	large := strings.Repeat("x", 64)
	for _, tc := range []struct {
		status   int
		mark     string
		retry    int   // status of the retry
		wantRuns int32 // handler runs after both requests
	}{
		{http.StatusCreated, "response-too-large", http.StatusConflict, 1},
		{http.StatusInternalServerError, "status-not-stored", http.StatusInternalServerError, 2},
		{http.StatusUnauthorized, "status-not-stored", http.StatusUnauthorized, 2},
		{http.StatusConflict, "status-not-stored", http.StatusConflict, 2},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			var runs atomic.Int32
			srv := a.server(t, a.Build(t, Setup{Backend: e.b, Prefix: ns + t.Name() + ":", Routes: []string{"/orders"}, Scope: Principal,
				Replay: &Replay{MaxBody: 16},
				Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
					runs.Add(1)
					w.WriteHeader(tc.status)
					_, _ = w.Write([]byte(large))
				}}))
			first := post(t, srv, "/orders", key, "", "b")
			if first.status != tc.status || first.body != large || first.header.Get("Idempotent-Not-Stored") != tc.mark {
				t.Errorf("first: %d, %d bytes, marked %q; want %d, 64 bytes, marked %q",
					first.status, len(first.body), first.header.Get("Idempotent-Not-Stored"), tc.status, tc.mark)
			}
			if retry := post(t, srv, "/orders", key, "", "b"); retry.status != tc.retry || runs.Load() != tc.wantRuns {
				t.Errorf("retry: %d after %d runs, want %d after %d", retry.status, runs.Load(), tc.retry, tc.wantRuns)
			}
		})
	}
}

func realPanicAfterStart(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	for _, tc := range []struct {
		desc  string
		write func(w http.ResponseWriter)
	}{
		{"body past MaxBody", func(w http.ResponseWriter) { _, _ = w.Write([]byte(strings.Repeat("p", 64))) }},
		{"flushed", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte("partial"))
			_ = http.NewResponseController(w).Flush()
		}},
	} {
		for _, h2 := range []bool{a.proto.h2} {
			t.Run(fmt.Sprintf("%s, HTTP/2 %v", tc.desc, h2), func(t *testing.T) {
				var runs atomic.Int32
				// Wait: the client sees the abort before the first run's
				// release is done; the retry waits for it.
				h := a.raw(t, Setup{Backend: e.b, Prefix: ns + t.Name() + ":", Wait: 5 * time.Second, Routes: []string{"/orders"}, Scope: Principal,
					Replay: &Replay{MaxBody: 16},
					Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
						if runs.Add(1) == 1 {
							tc.write(w)
							panic(errPanic)
						}
						w.WriteHeader(http.StatusCreated)
					}})
				srv := httptest.NewUnstartedServer(h)
				switch {
				case a.RecoversPanics:
				case h2:
					// HTTP/2 cannot close the connection under one
					// stream: the recovering middleware must let
					// http.ErrAbortHandler through (as Echo's does).
					srv.Config.Handler = recoverer(h, http.ErrAbortHandler)
				default:
					srv.Config.Handler = recoverer(h) // a naive recovering middleware, which answers every panic
				}
				if h2 {
					srv.EnableHTTP2 = true
					srv.StartTLS()
				} else {
					srv.Start()
				}
				t.Cleanup(srv.Close)
				got := post(t, srv, "/orders", key, "", "b")
				if got.err == nil {
					t.Errorf("a panic after the response started: read %d %q without an error; want the response aborted", got.status, got.body)
				}
				if strings.Contains(strings.ToLower(got.body), "internal") {
					t.Errorf("a second body followed the first: %q", got.body)
				}
				if retry := post(t, srv, "/orders", key, "", "b"); retry.status != http.StatusCreated || runs.Load() != 2 {
					t.Errorf("retry: %d after %d runs, want a run's 201 (nothing was stored)", retry.status, runs.Load())
				}
			})
		}
	}
}
