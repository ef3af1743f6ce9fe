package guardtest

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// trailerIdiom is a handler that sets trailers one of the ways net/http's
// ResponseWriter documents.
type trailerIdiom struct {
	desc  string
	write func(w http.ResponseWriter)
	// want are the trailers a client gets (but secretTrailer, which each
	// idiom sets to "secret").
	want http.Header
	// dropped: a bare net/http handler's client gets no trailers (net/http
	// sends a Content-Length for a small body once the handler returned,
	// and so no trailers), while the middleware, which holds the response
	// until the handler returns, declares them and sends them, as it does
	// in the replay.
	dropped bool
}

// noWrite is the idiom whose WriteHeader no write follows: a framework
// whose writer sends the status only at the first write or when the
// chain ends (gin) sends its trailers' values as headers, with or
// without the middleware.
const noWrite = "declared, no body"

// secretTrailer is set by every idiom and left off the allow-list: the
// first response sends it (net/http would), a replay never does.
const secretTrailer = "X-Session-Token"

// trailerIdioms are the idioms compared with net/http. Each also sets
// secretTrailer.
var trailerIdioms = []trailerIdiom{
	{"declared before WriteHeader, set after the body", func(w http.ResponseWriter) {
		w.Header().Set("Trailer", "X-Checksum, "+secretTrailer)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		w.Header().Set("X-Checksum", "c0ffee")
		w.Header().Set(secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
	{"declared, set in the header map kept across WriteHeader", func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Trailer", "X-Checksum")
		h.Add("Trailer", secretTrailer)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		h.Set("X-Checksum", "c0ffee")
		h.Set(secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
	{"declared, with a header value before WriteHeader", func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Trailer", "X-Twice, X-Checksum, "+secretTrailer)
		h.Set("X-Twice", "v")
		h.Set("X-Checksum", "early")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		h.Set("X-Checksum", "c0ffee")
		h.Set(secretTrailer, "secret")
	}, http.Header{"X-Twice": {"v"}, "X-Checksum": {"c0ffee"}}, false},
	{"declared, status by the first Write", func(w http.ResponseWriter) {
		w.Header().Set("Trailer", "X-Checksum, "+secretTrailer)
		_, _ = w.Write([]byte("order"))
		w.Header().Set("X-Checksum", "c0ffee")
		w.Header().Set(secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
	{noWrite, func(w http.ResponseWriter) {
		w.Header().Set("Trailer", "X-Checksum, "+secretTrailer)
		w.WriteHeader(http.StatusCreated)
		w.Header().Set("X-Checksum", "c0ffee")
		w.Header().Set(secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
	{"TrailerPrefix before WriteHeader", func(w http.ResponseWriter) {
		w.Header().Set(http.TrailerPrefix+"X-Checksum", "c0ffee")
		w.Header().Set(http.TrailerPrefix+secretTrailer, "secret")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
	{"TrailerPrefix after a small body", func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		w.Header().Set(http.TrailerPrefix+"X-Checksum", "c0ffee")
		w.Header().Set(http.TrailerPrefix+secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, true},
	{"TrailerPrefix after a large body", func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(strings.Repeat("o", 8<<10)))
		w.Header().Set(http.TrailerPrefix+"X-Checksum", "c0ffee")
		w.Header().Set(http.TrailerPrefix+secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
	{"declared and under TrailerPrefix", func(w http.ResponseWriter) {
		w.Header().Set("Trailer", "X-Checksum")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		w.Header().Set("X-Checksum", "c0ffee")
		w.Header().Set(http.TrailerPrefix+"X-Checksum", "prefixed")
		w.Header().Set(http.TrailerPrefix+secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"prefixed", "c0ffee"}}, false},
	{"declared, flushed, set in the kept map", func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Trailer", "X-Checksum, "+secretTrailer)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		_ = http.NewResponseController(w).Flush()
		h.Set("X-Checksum", "c0ffee")
		h.Set(secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
	{"declared and under TrailerPrefix before WriteHeader, flushed", func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Trailer", "X-Checksum")
		h.Set(http.TrailerPrefix+"X-Checksum", "prefixed")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		_ = http.NewResponseController(w).Flush()
		h.Set("X-Checksum", "c0ffee")
		h.Set(http.TrailerPrefix+secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"prefixed", "c0ffee"}}, false},
	{"a forbidden trailer declared", func(w http.ResponseWriter) {
		w.Header().Set("Trailer", "Content-Type, X-Checksum, "+secretTrailer)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("order"))
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Checksum", "c0ffee")
		w.Header().Set(secretTrailer, "secret")
	}, http.Header{"X-Checksum": {"c0ffee"}}, false},
}

// trailersAsNetHTTP: for every trailer idiom, the first response through
// the middleware carries the headers and trailers a bare net/http handler
// sends, and its replay the same trailers but those off the allow-list.
func trailersAsNetHTTP(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	allowed := append(guard.DefaultReplayHeaders(), "X-Checksum", "X-Twice")
	for _, idiom := range trailerIdioms {
		t.Run(idiom.desc, func(t *testing.T) {
			if idiom.desc == noWrite && a.StatusAtFirstWrite {
				t.Skip("the framework's writer sends the status at the first write or when the chain ends, so headers set after WriteHeader go out as headers, as without the middleware")
			}
			bare := a.server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { idiom.write(w) }))
			prefix := ns + t.Name() + ":"
			srv := a.server(t, a.Build(t, Setup{Backend: e.b, Prefix: prefix, Routes: []string{"/orders"}, Scope: Principal,
				Replay:  &Replay{Headers: allowed},
				Handler: func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) { idiom.write(w) }}))
			want := post(t, bare, "/orders", key, "", "b")
			first := post(t, srv, "/orders", key, "", "b")
			replay := post(t, srv, "/orders", key, "", "b")
			if want.err != nil || first.err != nil || replay.err != nil {
				t.Fatalf("reading the answers: %v, %v, %v", want.err, first.err, replay.err)
			}
			if replay.header.Get(guard.HeaderReplayed) != "true" {
				t.Fatalf("second request: %d, not a replay (Idempotent-Not-Stored %q)", replay.status, replay.header.Get(guard.HeaderNotStored))
			}
			for _, got := range []answer{first, replay} {
				if got.status != want.status || got.body != want.body {
					t.Errorf("%d with %d bytes, want net/http's %d with %d bytes", got.status, len(got.body), want.status, len(want.body))
				}
			}
			for _, name := range []string{"X-Twice", "X-Checksum", "Content-Type", secretTrailer} {
				if got, w := first.header.Values(name), want.header.Values(name); !slices.Equal(got, w) {
					t.Errorf("first response: header %s = %q, want net/http's %q", name, got, w)
				}
			}
			checkTrailers(t, a, idiom, want, first, replay)
			// Off the allow-list is not stored either.
			b, ok, err := e.b.Record(context.Background(), prefix+"POST /orders:"+DefaultPrincipal+":"+key)
			if !ok || err != nil {
				t.Fatalf("Record = %v, %v; want the stored response", ok, err)
			}
			if r, err := wire.DecodeRecord(b); err != nil || !equalHeader(r.Trailer, idiom.want) {
				t.Errorf("stored trailers %v (%v), want %v", r.Trailer, err, idiom.want)
			}
		})
	}
}

// checkTrailers checks the trailers of the first answer through the
// middleware against net/http's (want), and the replay's against the
// idiom's allow-listed ones.
func checkTrailers(t *testing.T, a Adapter, idiom trailerIdiom, want, first, replay answer) {
	t.Helper()
	wantFirst := idiom.want.Clone()
	wantFirst.Set(secretTrailer, "secret")
	wantBare := wantFirst
	if idiom.dropped {
		wantBare = http.Header{}
	}
	if a.proto.h2 {
		// HTTP/2 sends TrailerPrefix trailers whatever the body,
		// and one value of a name declared both ways: the bare
		// server's answer is the reference.
		wantFirst = want.trailer
	} else if !equalHeader(want.trailer, wantBare) {
		t.Fatalf("bare net/http: trailers %v, want %v (the test's idea of net/http is wrong)", want.trailer, wantBare)
	}
	if !equalHeader(first.trailer, wantFirst) {
		t.Errorf("first response: trailers %v, want %v", first.trailer, wantFirst)
	}
	if !equalHeader(replay.trailer, idiom.want) {
		t.Errorf("replay: trailers %v, want %v (the first's, allow-listed)", replay.trailer, idiom.want)
	}
}

// equalHeader reports whether a and b have the same non-empty fields.
func equalHeader(a, b http.Header) bool {
	nonEmpty := func(h http.Header) http.Header {
		out := http.Header{}
		for k, vs := range h {
			if len(vs) > 0 {
				out[k] = vs
			}
		}
		return out
	}
	x, y := nonEmpty(a), nonEmpty(b)
	if len(x) != len(y) {
		return false
	}
	for k, vs := range x {
		if !slices.Equal(vs, y[k]) {
			return false
		}
	}
	return true
}
