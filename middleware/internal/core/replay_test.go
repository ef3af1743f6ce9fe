package core

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// recorderBackend is a lock.Recorder with one stored record; nothing else
// is called.
type recorderBackend struct {
	nopBackend
	record []byte
}

var _ lock.Recorder = recorderBackend{}

func (b recorderBackend) ReleaseRecord(context.Context, lock.Lease, []byte, time.Duration) error {
	return nil
}

func (b recorderBackend) Record(context.Context, string) ([]byte, bool, error) {
	return b.record, b.record != nil, nil
}

func (b recorderBackend) ReleaseDone(context.Context, lock.Lease, time.Duration) error { return nil }

func (b recorderBackend) IsDone(context.Context, string) (bool, error) { return false, nil }

func (b recorderBackend) AcquireDone(context.Context, string, time.Duration) (lock.Lease, bool, error) {
	return lock.Lease{}, false, errors.ErrUnsupported
}

// AcquireRecord answers with the record; without one it is unsupported,
// so that the guard acquires as it does on any Recorder without it.
func (b recorderBackend) AcquireRecord(context.Context, string, time.Duration) (lock.Lease, []byte, error) {
	if b.record == nil {
		return lock.Lease{}, nil, errors.ErrUnsupported
	}
	return lock.Lease{}, b.record, nil
}

func TestNewReplayConfig(t *testing.T) {
	tests := []struct {
		desc    string
		b       lock.Backend
		c       ReplayConfig
		wantErr string
	}{
		{desc: "defaults", b: recorderBackend{}},
		{desc: "not a Recorder", b: nopBackend{}, wantErr: "lock.Recorder"},
		{desc: "negative TTL", b: recorderBackend{}, c: ReplayConfig{TTL: -1}, wantErr: "at least"},
		{desc: "TTL under 1ms", b: recorderBackend{}, c: ReplayConfig{TTL: time.Microsecond}, wantErr: "at least"},
		{desc: "negative body limit", b: recorderBackend{}, c: ReplayConfig{MaxBody: -1}, wantErr: "negative"},
		{desc: "negative request limit", b: recorderBackend{}, c: ReplayConfig{MaxRequestBody: -1}, wantErr: "negative"},
		{desc: "Content-Length", b: recorderBackend{}, c: ReplayConfig{Headers: []string{"content-length"}}, wantErr: "cannot be replayed"},
		{desc: "the replay header", b: recorderBackend{}, c: ReplayConfig{Headers: []string{guard.HeaderReplayed}}, wantErr: "cannot be replayed"},
		{desc: "not a header name", b: recorderBackend{}, c: ReplayConfig{Headers: []string{"X Y"}}, wantErr: "not a valid header name"},
		{desc: "Set-Cookie if asked", b: recorderBackend{}, c: ReplayConfig{Headers: []string{"set-cookie"}}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g, err := newFrom(tt.b, Config{Replay: &tt.c, Unscoped: true})
			if tt.wantErr == "" {
				if err != nil || !g.Replays() {
					t.Errorf("New = %v, %v; want a replaying Guard", g, err)
				}
				return
			}
			if g != nil || lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New = %v, %v; want an InvalidArgument error saying %q", g, err, tt.wantErr)
			}
		})
	}
}

// TestBadRecordLogged: a value that is not a record is answered with
// ErrBadRecord before any lock is taken, and logged once, without the key.
func TestBadRecordLogged(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	g, err := newFrom(recorderBackend{record: []byte("000000000000001")}, Config{Replay: &ReplayConfig{}, Unscoped: true})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "order-secret-key"
	req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader("b"))
	out, err := g.Serve(Exchange{W: httptest.NewRecorder(), R: req, Route: "POST /orders",
		Key: func() (string, error) { return secret, nil },
		Next: func(context.Context, func(http.ResponseWriter) http.ResponseWriter) error {
			t.Error("the handler ran")
			return nil
		}})
	if out != Refused || !errors.Is(err, guard.ErrBadRecord) {
		t.Errorf("Serve = %v, %v; want Refused with guard.ErrBadRecord", out, err)
	}
	if p := guard.ErrorProblem(err); p.Status != http.StatusInternalServerError || p.Type != guard.TypeBadRecord {
		t.Errorf("guard.ErrorProblem = %+v, want 500 %s", p, guard.TypeBadRecord)
	}
	got := logs.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "key_hash=") ||
		strings.Contains(got, secret) {
		t.Errorf("log = %q; want one ERROR line with the key's hash and not the key", got)
	}
}

// TestCapture checks what the capturing writer sends and keeps.
func TestCapture(t *testing.T) {
	rp := &replay{statuses: guard.DefaultReplayStatus}
	tests := []struct {
		desc     string
		write    func(w http.ResponseWriter)
		wantCode int
		wantBody string
		wantKind kind
		wantMark string // on the wire
	}{
		{"implicit 200", func(w http.ResponseWriter) { _, _ = w.Write([]byte("hi")) }, 200, "hi", storeResponse, ""},
		{"nothing written", func(w http.ResponseWriter) {}, 200, "", storeResponse, ""},
		{"201 and a body", func(w http.ResponseWriter) {
			w.WriteHeader(201)
			_, _ = w.Write([]byte("a"))
			_, _ = w.Write([]byte("b"))
		}, 201, "ab", storeResponse, ""},
		{"a second WriteHeader is ignored", func(w http.ResponseWriter) { w.WriteHeader(202); w.WriteHeader(500) }, 202, "", storeResponse, ""},
		{"5xx", func(w http.ResponseWriter) { w.WriteHeader(503) }, 503, "", storeNothing, guard.NotStoredStatus},
		{"429", func(w http.ResponseWriter) { w.WriteHeader(429) }, 429, "", storeNothing, guard.NotStoredStatus},
		{"404", func(w http.ResponseWriter) { w.WriteHeader(404) }, 404, "", storeResponse, ""},
		{"at the limit", func(w http.ResponseWriter) { _, _ = w.Write(bytes.Repeat([]byte("x"), 8)) }, 200, "xxxxxxxx", storeResponse, ""},
		{"over the limit", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte("12345"))
			_, _ = w.Write([]byte("6789"))
			_, _ = w.Write([]byte("0"))
		}, 200, "1234567890", storeCompleted, guard.NotStoredTooLarge},
		{"flushed, then over the limit", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte("12345"))
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte("67890"))
		}, 200, "1234567890", storeCompleted, ""},
		{"header changed after WriteHeader", func(w http.ResponseWriter) {
			w.Header().Set("A", "1")
			w.WriteHeader(200)
			w.Header().Set("A", "2")
		}, 200, "", storeResponse, ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c := newCapture(rec, &replay{maxBody: 8, statuses: guard.DefaultReplayStatus})
			tt.write(c)
			c.ended()
			k, mark := c.outcome(rp)
			c.send(mark)
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Errorf("sent %d %q, want %d %q", rec.Code, rec.Body, tt.wantCode, tt.wantBody)
			}
			if got := rec.Result().Header.Get(guard.HeaderNotStored); got != tt.wantMark {
				t.Errorf("%s = %q, want %q", guard.HeaderNotStored, got, tt.wantMark)
			}
			if a := rec.Result().Header.Get("A"); a == "2" {
				t.Error("a header set after WriteHeader was sent")
			}
			if k != tt.wantKind {
				t.Errorf("kind = %d, want %d", k, tt.wantKind)
			}
			if k == storeResponse && (c.status != tt.wantCode || c.body.String() != tt.wantBody) {
				t.Errorf("captured %d %q, want %d %q", c.status, c.body.String(), tt.wantCode, tt.wantBody)
			}
		})
	}
}

// TestCaptureHoldsUntilSent: nothing reaches the client before send, so a
// handler that panics after writing a 2xx sends none of it, and the
// headers it set are gone for the answer of a recovering middleware.
func TestCaptureHoldsUntilSent(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", "r1")
	c := newCapture(rec, &replay{maxBody: 1 << 10, statuses: guard.DefaultReplayStatus})
	c.Header().Set("Location", "/orders/1")
	c.WriteHeader(http.StatusCreated)
	_, _ = c.Write([]byte("created"))
	if rec.Body.Len() != 0 {
		t.Fatalf("sent before send: %q", rec.Body)
	}
	c.discard()
	if rec.Body.Len() != 0 {
		t.Errorf("a discarded response sent %q", rec.Body)
	}
	if got := rec.Header().Get("Location"); got != "" {
		t.Errorf("Location = %q after discard, want none", got)
	}
	if got := rec.Header().Get("X-Request-Id"); got != "r1" {
		t.Errorf("X-Request-Id = %q after discard, want the header set in front, r1", got)
	}
	http.Error(rec, "recovered", http.StatusInternalServerError) // a recovering middleware
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("the recovering middleware's answer = %d, want 500", rec.Code)
	}
}

// TestCaptureTrailers: trailers declared in the Trailer header and set
// under http.TrailerPrefix go out after the body, and are kept for the
// record.
func TestCaptureTrailers(t *testing.T) {
	rec := httptest.NewRecorder()
	c := newCapture(rec, &replay{maxBody: 1 << 10, statuses: guard.DefaultReplayStatus})
	c.Header().Set("Trailer", "X-Checksum")
	c.WriteHeader(http.StatusOK)
	_, _ = c.Write([]byte("body"))
	c.Header().Set("X-Checksum", "abc")
	c.Header().Set(http.TrailerPrefix+"X-Late", "1")
	c.ended()
	want := http.Header{"X-Checksum": {"abc"}, "X-Late": {"1"}}
	if got := c.trailers(); !reflect.DeepEqual(got, want) {
		t.Errorf("trailers() = %v, want %v", got, want)
	}
	c.send("")
	if got := rec.Result().Trailer; !reflect.DeepEqual(got, want) {
		t.Errorf("trailers sent = %v, want %v", got, want)
	}
}

// hijacker is a ResponseWriter whose connection can be hijacked.
type hijacker struct {
	*httptest.ResponseRecorder
	hijacked bool
}

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked = true
	return nil, nil, nil
}

// TestCaptureHijack: a hijack through http.ResponseController reaches the
// connection and leaves nothing to store or send.
func TestCaptureHijack(t *testing.T) {
	h := &hijacker{ResponseRecorder: httptest.NewRecorder()}
	c := newCapture(h, &replay{maxBody: 1 << 10, statuses: guard.DefaultReplayStatus})
	if _, _, err := http.NewResponseController(c).Hijack(); err != nil {
		t.Fatal(err)
	}
	if !h.hijacked {
		t.Fatal("the connection was not hijacked")
	}
	_, _ = c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
	c.ended()
	k, mark := c.outcome(&replay{statuses: guard.DefaultReplayStatus})
	c.send(mark)
	if k != storeNothing || h.Body.Len() != 0 || h.Code != http.StatusOK {
		t.Errorf("after a hijack: kind %d, sent %d %q; want nothing", k, h.Code, h.Body)
	}
}
