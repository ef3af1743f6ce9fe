package httplock_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// TestFromIdempotencyKey runs the shared cases (guardtest): the draft's
// structured-field string, the bare form, and the errors, which never
// contain the value.
func TestFromIdempotencyKey(t *testing.T) {
	guardtest.RunIdempotencyKeyCases(t, httplock.FromIdempotencyKey())
}

// TestFromIdempotencyKeyWire checks requests as net/http reads them: the
// space around a value is gone, and two header lines stay two, so they
// are refused rather than one of them used.
func TestFromIdempotencyKeyWire(t *testing.T) {
	tests := []struct {
		desc    string
		lines   string // the Idempotency-Key header lines
		want    string
		wantErr string
	}{
		{desc: "quoted", lines: "Idempotency-Key: \"8e03978e-40d5-43e8-bc93-6894a57f9324\"\r\n",
			want: "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{desc: "space and tab around", lines: "Idempotency-Key: \t \"k1\" \t\r\n", want: "k1"},
		{desc: "lower-case name, bare key", lines: "idempotency-key: abc-123\r\n", want: "abc-123"},
		{desc: "two lines", lines: "Idempotency-Key: \"a\"\r\nIdempotency-Key: \"b\"\r\n", wantErr: "several header lines"},
		{desc: "two lines of one key", lines: "Idempotency-Key: \"a\"\r\nidempotency-key: \"a\"\r\n", wantErr: "several header lines"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			raw := "POST /orders HTTP/1.1\r\nHost: example.com\r\n" + tt.lines + "Content-Length: 0\r\n\r\n"
			r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := httplock.FromIdempotencyKey()(r)
			switch {
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("FromIdempotencyKey() on %q = %q, %v; want %q", tt.lines, got, err, tt.want)
			case tt.wantErr != "" && (lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("FromIdempotencyKey() on %q = %q, %v; want an InvalidArgument error containing %q",
					tt.lines, got, err, tt.wantErr)
			}
		})
	}
}

// TestFromIdempotencyKeyForms checks that a key sent quoted and sent bare
// is one key, unlike with FromHeader, which reads the value as written.
func TestFromIdempotencyKeyForms(t *testing.T) {
	read := func(f httplock.KeyFunc, v string) string {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/orders", nil)
		r.Header.Set("Idempotency-Key", v)
		k, err := f(r)
		if err != nil {
			t.Fatalf("key of %q: %v", v, err)
		}
		return k
	}
	quoted, bare := read(httplock.FromIdempotencyKey(), `"k-1"`), read(httplock.FromIdempotencyKey(), "k-1")
	if quoted != bare {
		t.Errorf("FromIdempotencyKey: quoted %q, bare %q; want one key", quoted, bare)
	}
	if got := read(httplock.FromHeader("Idempotency-Key"), `"k-1"`); got != `"k-1"` {
		t.Errorf("FromHeader = %q, want the value as written", got)
	}
}
