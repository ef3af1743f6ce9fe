package guardtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

// IdempotencyKeyCase is one request for an adapter's FromIdempotencyKey:
// its Idempotency-Key header lines, and the key or the part of the error
// message it must give.
type IdempotencyKeyCase struct {
	Desc    string
	Values  []string // the Idempotency-Key header lines
	Want    string
	WantErr string // a part of the message; "" means no error
}

// IdempotencyKeyCases are the draft's structured-field string, the bare
// form, and the errors, whose messages must never contain the value (every
// refused value holds "s3cr3t").
var IdempotencyKeyCases = []IdempotencyKeyCase{
	{Desc: "draft: UUID", Values: []string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`},
		Want: "8e03978e-40d5-43e8-bc93-6894a57f9324"},
	{Desc: "draft: random string", Values: []string{`"clkyoesmbgybucifusbbtdsbohtyuuwz"`},
		Want: "clkyoesmbgybucifusbbtdsbohtyuuwz"},
	{Desc: "escapes", Values: []string{`"a\"b\\c"`}, Want: `a"b\c`},
	{Desc: "token", Values: []string{"abc-123"}, Want: "abc-123"},
	{Desc: "parameters ignored", Values: []string{`"k1";a=1;b`}, Want: "k1"},
	{Desc: "255 characters", Values: []string{strings.Repeat("k", 255)}, Want: strings.Repeat("k", 255)},
	{Desc: "no header", WantErr: "header Idempotency-Key is missing or empty"},
	{Desc: "two header lines", Values: []string{`"s3cr3t-1"`, `"s3cr3t-2"`}, WantErr: "several header lines"},
	{Desc: "a list", Values: []string{`"s3cr3t-1", "s3cr3t-2"`}, WantErr: "several values"},
	{Desc: "NUL", Values: []string{"\"s3cr3t\x00\""}, WantErr: "control character"},
	{Desc: "tab inside the quotes", Values: []string{"\"s3cr3t\tx\""}, WantErr: "control character"},
	{Desc: "DEL", Values: []string{"s3cr3t\x7f"}, WantErr: "control character"},
	{Desc: "non-ASCII", Values: []string{`"s3cr3t-é"`}, WantErr: "non-ASCII character"},
	{Desc: "256 characters, bare", Values: []string{"s3cr3t" + strings.Repeat("k", 250)}, WantErr: "is 256 characters; at most 255"},
	{Desc: "256 characters, quoted", Values: []string{`"s3cr3t` + strings.Repeat("k", 250) + `"`}, WantErr: "is 256 characters; at most 255"},
	{Desc: "empty string", Values: []string{`""`}, WantErr: "is empty"},
	{Desc: "unterminated quote", Values: []string{`"s3cr3t`}, WantErr: "the closing quote is missing"},
	{Desc: `bad escape \n`, Values: []string{`"s3cr3t\n"`}, WantErr: "a backslash escapes only"},
}

// RunIdempotencyKeyCases runs every case of IdempotencyKeyCases through
// read, an adapter's FromIdempotencyKey applied to the request.
func RunIdempotencyKeyCases(t *testing.T, read func(*http.Request) (string, error)) {
	for _, tc := range IdempotencyKeyCases {
		t.Run(tc.Desc, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/orders", nil)
			for _, v := range tc.Values {
				r.Header.Add("Idempotency-Key", v)
			}
			got, err := read(r)
			if tc.WantErr == "" {
				if err != nil || got != tc.Want {
					t.Errorf("FromIdempotencyKey()(%q) = %q, %v; want %q", tc.Values, got, err, tc.Want)
				}
				return
			}
			if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tc.WantErr) {
				t.Errorf("FromIdempotencyKey()(%q) = %q, %v; want an InvalidArgument error containing %q",
					tc.Values, got, err, tc.WantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("FromIdempotencyKey()(%q) error %q contains the value", tc.Values, err)
			}
		})
	}
}
