package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo"
)

// TestFromIdempotencyKey checks the keys FromIdempotencyKey reads from
// Idempotency-Key header lines: the draft's structured-field string, the
// bare form, and the errors, which never contain the value.
func TestFromIdempotencyKey(t *testing.T) {
	tests := []struct {
		desc    string
		values  []string // the Idempotency-Key header lines
		want    string
		wantErr string // a part of the message; "" means no error
	}{
		{desc: "draft: UUID", values: []string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`},
			want: "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{desc: "draft: random string", values: []string{`"clkyoesmbgybucifusbbtdsbohtyuuwz"`},
			want: "clkyoesmbgybucifusbbtdsbohtyuuwz"},
		{desc: "escapes", values: []string{`"a\"b\\c"`}, want: `a"b\c`},
		{desc: "token", values: []string{"abc-123"}, want: "abc-123"},
		{desc: "parameters ignored", values: []string{`"k1";a=1;b`}, want: "k1"},
		{desc: "255 characters", values: []string{strings.Repeat("k", 255)}, want: strings.Repeat("k", 255)},
		{desc: "no header", wantErr: "header Idempotency-Key is missing or empty"},
		{desc: "two header lines", values: []string{`"s3cr3t-1"`, `"s3cr3t-2"`}, wantErr: "several header lines"},
		{desc: "a list", values: []string{`"s3cr3t-1", "s3cr3t-2"`}, wantErr: "several values"},
		{desc: "tab inside the quotes", values: []string{"\"s3cr3t\tx\""}, wantErr: "control character"},
		{desc: "DEL", values: []string{"s3cr3t\x7f"}, wantErr: "control character"},
		{desc: "non-ASCII", values: []string{`"s3cr3t-é"`}, wantErr: "non-ASCII character"},
		{desc: "256 characters", values: []string{`"s3cr3t` + strings.Repeat("k", 250) + `"`}, wantErr: "is 256 characters; at most 255"},
		{desc: "empty string", values: []string{`""`}, wantErr: "is empty"},
		{desc: "unterminated quote", values: []string{`"s3cr3t`}, wantErr: "the closing quote is missing"},
		{desc: `bad escape \n`, values: []string{`"s3cr3t\n"`}, wantErr: "a backslash escapes only"},
	}
	e := echo.New()
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/orders", nil)
			for _, v := range tt.values {
				req.Header.Add("Idempotency-Key", v)
			}
			got, err := echolock.FromIdempotencyKey()(e.NewContext(req, httptest.NewRecorder()))
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Errorf("FromIdempotencyKey()(%q) = %q, %v; want %q", tt.values, got, err, tt.want)
				}
				return
			}
			if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("FromIdempotencyKey()(%q) = %q, %v; want an InvalidArgument error containing %q",
					tt.values, got, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("FromIdempotencyKey()(%q) error %q contains the value", tt.values, err)
			}
		})
	}
}

// TestFromIdempotencyKeyForms checks that a key sent quoted and sent bare
// is one key, unlike with FromHeader, which reads the value as written.
func TestFromIdempotencyKeyForms(t *testing.T) {
	e := echo.New()
	read := func(f echolock.KeyExtractor, v string) string {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/orders", nil)
		req.Header.Set("Idempotency-Key", v)
		k, err := f(e.NewContext(req, httptest.NewRecorder()))
		if err != nil {
			t.Fatalf("key of %q: %v", v, err)
		}
		return k
	}
	quoted, bare := read(echolock.FromIdempotencyKey(), `"k-1"`), read(echolock.FromIdempotencyKey(), "k-1")
	if quoted != bare {
		t.Errorf("FromIdempotencyKey: quoted %q, bare %q; want one key", quoted, bare)
	}
	if got := read(echolock.FromHeader("Idempotency-Key"), `"k-1"`); got != `"k-1"` {
		t.Errorf("FromHeader = %q, want the value as written", got)
	}
}
