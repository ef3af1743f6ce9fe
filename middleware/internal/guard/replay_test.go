package guard

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// recorderBackend is a lock.Recorder with one stored record; nothing else
// is called.
type recorderBackend struct {
	nopBackend
	record []byte
}

func (b recorderBackend) ReleaseRecord(context.Context, lock.Lease, []byte, time.Duration) error {
	return nil
}

func (b recorderBackend) Record(context.Context, string) ([]byte, bool, error) {
	return b.record, b.record != nil, nil
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
		{desc: "negative TTL", b: recorderBackend{}, c: ReplayConfig{TTL: -1}, wantErr: "negative"},
		{desc: "TTL under 1ms", b: recorderBackend{}, c: ReplayConfig{TTL: time.Microsecond}, wantErr: "at least"},
		{desc: "negative body limit", b: recorderBackend{}, c: ReplayConfig{MaxBody: -1}, wantErr: "negative"},
		{desc: "negative request limit", b: recorderBackend{}, c: ReplayConfig{MaxRequestBody: -1}, wantErr: "negative"},
		{desc: "Content-Length", b: recorderBackend{}, c: ReplayConfig{Headers: []string{"content-length"}}, wantErr: "cannot be replayed"},
		{desc: "the replay header", b: recorderBackend{}, c: ReplayConfig{Headers: []string{HeaderReplayed}}, wantErr: "cannot be replayed"},
		{desc: "not a header name", b: recorderBackend{}, c: ReplayConfig{Headers: []string{"X Y"}}, wantErr: "not a valid header name"},
		{desc: "Set-Cookie if asked", b: recorderBackend{}, c: ReplayConfig{Headers: []string{"set-cookie"}}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g, err := New(tt.b, Config{Replay: &tt.c})
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

	g, err := New(recorderBackend{record: []byte("000000000000001")}, Config{Replay: &ReplayConfig{}})
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
	if out != Refused || !errors.Is(err, ErrBadRecord) {
		t.Errorf("Serve = %v, %v; want Refused with ErrBadRecord", out, err)
	}
	if p := ErrorProblem(err); p.Status != http.StatusInternalServerError || p.Type != TypeBadRecord {
		t.Errorf("ErrorProblem = %+v, want 500 %s", p, TypeBadRecord)
	}
	got := logs.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "key_hash=") ||
		strings.Contains(got, secret) {
		t.Errorf("log = %q; want one ERROR line with the key's hash and not the key", got)
	}
}

// TestCapture checks what the capturing writer sends and keeps.
func TestCapture(t *testing.T) {
	tests := []struct {
		desc      string
		write     func(w http.ResponseWriter)
		wantCode  int
		wantBody  string
		wantStore bool
		wantMark  string
	}{
		{"implicit 200", func(w http.ResponseWriter) { _, _ = w.Write([]byte("hi")) }, 200, "hi", true, ""},
		{"nothing written", func(w http.ResponseWriter) {}, 200, "", true, ""},
		{"201 and a body", func(w http.ResponseWriter) {
			w.WriteHeader(201)
			_, _ = w.Write([]byte("a"))
			_, _ = w.Write([]byte("b"))
		}, 201, "ab", true, ""},
		{"a second WriteHeader is ignored", func(w http.ResponseWriter) { w.WriteHeader(202); w.WriteHeader(500) }, 202, "", true, ""},
		{"5xx", func(w http.ResponseWriter) { w.WriteHeader(503) }, 503, "", false, ""},
		{"at the limit", func(w http.ResponseWriter) { _, _ = w.Write(bytes.Repeat([]byte("x"), 8)) }, 200, "xxxxxxxx", true, ""},
		{"over the limit", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte("12345"))
			_, _ = w.Write([]byte("6789"))
			_, _ = w.Write([]byte("0"))
		}, 200, "1234567890", false, NotStoredTooLarge},
		{"flushed, then over the limit", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte("12345"))
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte("67890"))
		}, 200, "1234567890", false, ""},
		{"header changed after WriteHeader", func(w http.ResponseWriter) {
			w.Header().Set("A", "1")
			w.WriteHeader(200)
			w.Header().Set("A", "2")
		}, 200, "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c := newCapture(rec, 8)
			tt.write(c)
			c.finish()
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Errorf("sent %d %q, want %d %q", rec.Code, rec.Body, tt.wantCode, tt.wantBody)
			}
			if got := rec.Header().Get(HeaderNotStored); got != tt.wantMark {
				t.Errorf("%s = %q, want %q", HeaderNotStored, got, tt.wantMark)
			}
			if a := rec.Header().Get("A"); a == "2" {
				t.Error("a header set after WriteHeader was sent")
			}
			status, _, body, ok := c.response()
			if ok != tt.wantStore || (ok && (status != tt.wantCode || string(body) != tt.wantBody)) {
				t.Errorf("response() = %d %q %v, want %d %q %v", status, body, ok, tt.wantCode, tt.wantBody, tt.wantStore)
			}
		})
	}
}
