package guardtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Every scenario runs once per protocol, through a real http.Server:
// HTTP/1.1 over TCP, and HTTP/2 over TLS. Build's handler is served by
// that server, and the scenarios hold a client-side handler in its place
// (remote), so a scenario written against http.Handler reads the answer
// a client reads.

// protocol is the transport a scenario runs on.
type protocol struct {
	name string
	h2   bool
}

var protocols = []protocol{{"HTTP/1.1", false}, {"HTTP/2", true}}

// requestIDHeader carries the request's id to the server, so that a
// panic there can be raised again on the client side.
const requestIDHeader = "X-Guardtest-Request"

// start serves h on p until the test ends.
func (p protocol) start(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	if p.h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// remote is the client side of a handler served over a real server.
type remote struct {
	t      *testing.T
	h2     bool
	srv    *httptest.Server
	seq    atomic.Int64
	panics sync.Map // request id -> the value the handler panicked with
}

// serveRemote serves s's handler as a's Build makes it, behind s.Front,
// on p, and returns its client side. A panic that escapes the stack
// aborts the response, and is raised again where the client reads it.
func serveRemote(t *testing.T, a Adapter, p protocol, s Setup) *remote {
	h := a.Build(t, s)
	if s.Front != nil {
		h = s.Front(h)
	}
	rm := &remote{t: t, h2: p.h2}
	rm.srv = p.start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					rm.panics.Store(r.Header.Get(requestIDHeader), v)
				}
				panic(http.ErrAbortHandler)
			}
		}()
		h.ServeHTTP(w, r)
	}))
	return rm
}

// ServeHTTP sends r to the server and copies the answer to w: status,
// headers (without Date), body and trailers. A transport error is
// answered 502, unless the handler panicked: the panic goes on here.
func (rm *remote) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := strconv.FormatInt(rm.seq.Add(1), 10)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, rm.srv.URL+r.URL.RequestURI(), r.Body)
	if err != nil {
		panic(err)
	}
	out.Header = r.Header.Clone()
	out.Header.Set(requestIDHeader, id)
	out.ContentLength = r.ContentLength
	res, err := rm.srv.Client().Do(out)
	if err != nil {
		rm.failed(w, id, err)
		return
	}
	defer res.Body.Close()
	if (res.ProtoMajor == 2) != rm.h2 {
		rm.t.Errorf("answered over %s on the HTTP/2=%v server", res.Proto, rm.h2)
	}
	for k, vs := range res.Header {
		if k != "Date" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(res.StatusCode)
	if _, err := io.Copy(w, res.Body); err != nil {
		rm.failed(w, id, err)
		return
	}
	for k, vs := range res.Trailer {
		w.Header()[http.TrailerPrefix+k] = vs
	}
}

// failed raises the panic of request id, if its handler panicked, else
// answers 502 (unless the status is out).
func (rm *remote) failed(w http.ResponseWriter, id string, err error) {
	if v, ok := rm.panics.Load(id); ok {
		panic(v)
	}
	http.Error(w, "guardtest: "+err.Error(), http.StatusBadGateway)
}
