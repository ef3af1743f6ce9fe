package guard

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

// idemHeader returns a header with one Idempotency-Key line per value.
func idemHeader(values ...string) http.Header {
	h := http.Header{}
	for _, v := range values {
		h.Add(HeaderIdempotencyKey, v)
	}
	return h
}

// sfQuote serialises key as an sf-string (RFC 8941 section 4.1.6).
func sfQuote(key string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
}

// TestIdempotencyKey checks the keys read from Idempotency-Key header
// lines, and that every error says what is wrong without the value. The
// values of the error cases hold "s3cr3t" where they have room, and no
// message may contain it.
func TestIdempotencyKey(t *testing.T) {
	k255, k256 := strings.Repeat("k", 255), strings.Repeat("k", 256)
	printable := "" // every printable ASCII byte a bare key may hold
	for c := byte(0x21); c < 0x7f; c++ {
		if !strings.ContainsRune(`,;"`, rune(c)) {
			printable += string(c)
		}
	}
	tests := []struct {
		desc    string
		values  []string // the header lines; none: no header
		want    string
		wantErr string // a part of the message; "" means no error
	}{
		// The draft's examples.
		{desc: "draft: UUID", values: []string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`},
			want: "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{desc: "draft: random string", values: []string{`"clkyoesmbgybucifusbbtdsbohtyuuwz"`},
			want: "clkyoesmbgybucifusbbtdsbohtyuuwz"},

		// Quoted.
		{desc: "escaped quote and backslash", values: []string{`"a\"b\\c"`}, want: `a"b\c`},
		{desc: "only escapes", values: []string{`"\"\\"`}, want: `"\`},
		{desc: "escape at the start and plain text after", values: []string{`"\\abc"`}, want: `\abc`},
		{desc: "space inside the quotes", values: []string{`" a b "`}, want: " a b "},
		{desc: "comma and semicolon inside the quotes", values: []string{`"a,b;c"`}, want: "a,b;c"},
		{desc: "space and tabs around", values: []string{" \t\"k1\" \t"}, want: "k1"},
		{desc: "255 characters", values: []string{sfQuote(k255)}, want: k255},
		{desc: "255 characters after unescaping", values: []string{sfQuote(strings.Repeat(`\`, 255))},
			want: strings.Repeat(`\`, 255)},
		{desc: "one character", values: []string{`"k"`}, want: "k"},

		// Bare (the leniency beyond the draft).
		{desc: "token", values: []string{"abc-123"}, want: "abc-123"},
		{desc: "token: UUID", values: []string{"8e03978e-40d5-43e8-bc93-6894a57f9324"},
			want: "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{desc: "token: every allowed character", values: []string{printable}, want: printable},
		{desc: "token: space around", values: []string{"  abc \t"}, want: "abc"},
		{desc: "token: 255 characters", values: []string{k255}, want: k255},

		// Parameters, parsed and ignored.
		{desc: "parameter ignored", values: []string{`"k1";a=1`}, want: "k1"},
		{desc: "parameters of every type", want: "k1",
			values: []string{`"k1";i=-12;d=1.5;s="x\"y;z";t=tok/en:1;b=:aGk=:;n=:aGk:;f=?0;e=::;flag;*x=?1`}},
		{desc: "space after ';'", values: []string{`"k1";  a=1; b`}, want: "k1"},
		{desc: "a key twice", values: []string{`"k1";a=1;a=2`}, want: "k1"},
		{desc: "limits of numbers", values: []string{`"k1";a=-999999999999999;b=999999999999.999`}, want: "k1"},
		{desc: "key characters", values: []string{`"k1";*a-b_c.d*9=x`}, want: "k1"},

		// Header lines.
		{desc: "no header", wantErr: "header Idempotency-Key is missing or empty"},
		{desc: "empty header", values: []string{""}, wantErr: "header Idempotency-Key is missing or empty"},
		{desc: "blank header", values: []string{" \t "}, wantErr: "header Idempotency-Key is missing or empty"},
		{desc: "two header lines", values: []string{`"s3cr3t-1"`, `"s3cr3t-2"`}, wantErr: "several header lines"},
		{desc: "two header lines, one empty", values: []string{`"s3cr3t"`, ""}, wantErr: "several header lines"},

		// Several values in one line.
		{desc: "a list", values: []string{`"s3cr3t-1", "s3cr3t-2"`}, wantErr: "not a structured-field string: it holds several values"},
		{desc: "a list without space", values: []string{`"s3cr3t-1","s3cr3t-2"`}, wantErr: "it holds several values"},
		{desc: "a list of tokens", values: []string{"s3cr3t-1, s3cr3t-2"}, wantErr: "neither a structured-field string nor a bare key"},
		{desc: "an inner list", values: []string{`("s3cr3t")`}, wantErr: "neither a structured-field string nor a bare key"},

		// Characters.
		{desc: "NUL inside the quotes", values: []string{"\"s3cr3t\x00\""}, wantErr: "contains a control character"},
		{desc: "tab inside the quotes", values: []string{"\"s3cr3t\tx\""}, wantErr: "contains a control character"},
		{desc: "DEL inside the quotes", values: []string{"\"s3cr3t\x7f\""}, wantErr: "contains a control character"},
		{desc: "newline in a token", values: []string{"s3cr3t\nx"}, wantErr: "contains a control character"},
		{desc: "DEL in a token", values: []string{"s3cr3t\x7f"}, wantErr: "contains a control character"},
		{desc: "control character in a parameter", values: []string{"\"s3cr3t\";a=\"\x01\""}, wantErr: "contains a control character"},
		{desc: "non-ASCII inside the quotes", values: []string{`"s3cr3t-café"`}, wantErr: "contains a non-ASCII character"},
		{desc: "non-ASCII token", values: []string{"s3cr3t-café"}, wantErr: "contains a non-ASCII character"},
		{desc: "invalid UTF-8", values: []string{"\"s3cr3t\xff\""}, wantErr: "contains a non-ASCII character"},
		{desc: "space in a token", values: []string{"s3cr3t key"}, wantErr: "neither a structured-field string nor a bare key"},
		{desc: "semicolon in a token", values: []string{"s3cr3t;a=1"}, wantErr: "neither a structured-field string nor a bare key"},
		{desc: "double quote in a token", values: []string{`s3cr3t"`}, wantErr: "neither a structured-field string nor a bare key"},

		// Length.
		{desc: "256 characters", values: []string{sfQuote("s3cr3t" + k256[6:])}, wantErr: "is 256 characters; at most 255"},
		{desc: "256 characters after unescaping", values: []string{sfQuote(strings.Repeat(`"`, 256))},
			wantErr: "is 256 characters; at most 255"},
		{desc: "token: 256 characters", values: []string{"s3cr3t" + k256[6:]}, wantErr: "is 256 characters; at most 255"},
		{desc: "empty string", values: []string{`""`}, wantErr: "the key in the Idempotency-Key header is empty"},
		{desc: "empty string with a parameter", values: []string{`"";a=1`}, wantErr: "is empty"},

		// Malformed strings.
		{desc: "unterminated quote", values: []string{`"s3cr3t`}, wantErr: "the closing quote is missing"},
		{desc: "a lone quote", values: []string{`"`}, wantErr: "the closing quote is missing"},
		{desc: "backslash at the end", values: []string{`"s3cr3t\`}, wantErr: "the closing quote is missing"},
		{desc: "escaped closing quote", values: []string{`"s3cr3t\"`}, wantErr: "the closing quote is missing"},
		{desc: `bad escape \n`, values: []string{`"s3cr3t\n"`}, wantErr: `a backslash escapes only '"' or '\'`},
		{desc: `bad escape \u`, values: []string{`"s3cr3t\u0041"`}, wantErr: "a backslash escapes only"},
		{desc: "text after the string", values: []string{`"s3cr3t"x`}, wantErr: "something other than parameters follows the string"},
		{desc: "space before a parameter", values: []string{`"s3cr3t" ;a=1`}, wantErr: "something other than parameters follows"},
		{desc: "two strings", values: []string{`"s3cr3t" "x"`}, wantErr: "something other than parameters follows"},

		// Malformed parameters.
		{desc: "parameter: no key", values: []string{`"s3cr3t";`}, wantErr: "a parameter after the string is malformed"},
		{desc: "parameter: upper-case key", values: []string{`"s3cr3t";A=1`}, wantErr: "parameter after the string is malformed"},
		{desc: "parameter: key starts with a digit", values: []string{`"s3cr3t";1a=1`}, wantErr: "parameter"},
		{desc: "parameter: no value after '='", values: []string{`"s3cr3t";a=`}, wantErr: "parameter"},
		{desc: "parameter: space around '='", values: []string{`"s3cr3t";a= 1`}, wantErr: "parameter"},
		{desc: "parameter: 16-digit integer", values: []string{`"s3cr3t";a=1234567890123456`}, wantErr: "parameter"},
		{desc: "parameter: 13-digit decimal", values: []string{`"s3cr3t";a=1234567890123.1`}, wantErr: "parameter"},
		{desc: "parameter: 4 decimal places", values: []string{`"s3cr3t";a=1.1234`}, wantErr: "parameter"},
		{desc: "parameter: decimal without fraction", values: []string{`"s3cr3t";a=1.`}, wantErr: "parameter"},
		{desc: "parameter: a lone minus", values: []string{`"s3cr3t";a=-`}, wantErr: "parameter"},
		{desc: "parameter: minus then a letter", values: []string{`"s3cr3t";a=-x`}, wantErr: "parameter"},
		{desc: "parameter: boolean ?2", values: []string{`"s3cr3t";a=?2`}, wantErr: "parameter"},
		{desc: "parameter: unterminated string", values: []string{`"s3cr3t";a="x`}, wantErr: "parameter"},
		{desc: "parameter: unterminated byte sequence", values: []string{`"s3cr3t";a=:aGk=`}, wantErr: "parameter"},
		{desc: "parameter: byte sequence outside base64", values: []string{`"s3cr3t";a=:a*k=:`}, wantErr: "parameter"},
		{desc: "parameter: byte sequence of bad length", values: []string{`"s3cr3t";a=:aGkaa:`}, wantErr: "parameter"},
		{desc: "parameter: inner list", values: []string{`"s3cr3t";a=(1)`}, wantErr: "parameter"},
		{desc: "parameter: RFC 9651 date", values: []string{`"s3cr3t";a=@1659578233`}, wantErr: "parameter"},
		{desc: "text after parameters", values: []string{`"s3cr3t";a=1.5.5`}, wantErr: "something other than parameters follows"},
		{desc: "list after parameters", values: []string{`"s3cr3t";a=1, "b"`}, wantErr: "it holds several values"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := IdempotencyKey(idemHeader(tt.values...), HeaderIdempotencyKey)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Errorf("IdempotencyKey(%q) = %q, %v; want %q", tt.values, got, err, tt.want)
				}
				return
			}
			var le *lock.Error
			if !errors.As(err, &le) || le.Code != lock.CodeInvalidArgument || le.Op != "key" ||
				!strings.Contains(le.Msg, tt.wantErr) {
				t.Fatalf("IdempotencyKey(%q) = %q, %v; want an InvalidArgument error with Op key containing %q",
					tt.values, got, err, tt.wantErr)
			}
			if got != "" {
				t.Errorf("IdempotencyKey(%q) = %q with an error, want \"\"", tt.values, got)
			}
			if strings.Contains(err.Error(), "s3cr3t") || len(tt.values) == 1 && len(tt.values[0]) > 2 && strings.Contains(err.Error(), tt.values[0]) {
				t.Errorf("IdempotencyKey(%q) error %q contains the value", tt.values, err)
			}
		})
	}
}

// TestIdempotencyKeyMissing checks that a missing header gives exactly
// the error of Missing, whatever the case of the name.
func TestIdempotencyKeyMissing(t *testing.T) {
	for _, name := range []string{"Idempotency-Key", "idempotency-key", "X-Request-Key"} {
		_, got := IdempotencyKey(http.Header{"Other": {`"k"`}}, name)
		want := Missing("header", name)
		if got == nil || got.Error() != want.Error() || lock.CodeOf(got) != lock.CodeOf(want) {
			t.Errorf("IdempotencyKey without the header %s: error %v, want %v", name, got, want)
		}
	}
	t.Run("name in any case", func(t *testing.T) {
		h := http.Header{}
		h.Set("x-request-key", `"k1"`)
		if got, err := IdempotencyKey(h, "X-REQUEST-KEY"); err != nil || got != "k1" {
			t.Errorf("IdempotencyKey = %q, %v; want %q", got, err, "k1")
		}
	})
}

// idemMessages are the messages IdempotencyKey may give for the header
// Idempotency-Key, with each number written N.
var idemMessages = map[string]bool{
	"header Idempotency-Key is missing or empty":                                                                                                                           true,
	"the Idempotency-Key header is sent on several header lines; a request carries one key":                                                                                true,
	"the Idempotency-Key header contains a non-ASCII character; a key is printable ASCII":                                                                                  true,
	"the Idempotency-Key header contains a control character; a key is printable ASCII":                                                                                    true,
	"the Idempotency-Key header is not a structured-field string: the closing quote is missing":                                                                            true,
	`the Idempotency-Key header is not a structured-field string: a backslash escapes only '"' or '\'`:                                                                     true,
	"the Idempotency-Key header is not a structured-field string: a parameter after the string is malformed":                                                               true,
	"the Idempotency-Key header is not a structured-field string: something other than parameters follows the string":                                                      true,
	"the Idempotency-Key header is not a structured-field string: it holds several values; send one string":                                                                true,
	`the Idempotency-Key header is neither a structured-field string nor a bare key: quote the key ("...") or send it without spaces, commas, semicolons or double quotes`: true,
	"the key in the Idempotency-Key header is empty":                                                                                                                       true,
	"the key in the Idempotency-Key header is N characters; at most N":                                                                                                     true,
}

var digitRuns = regexp.MustCompile(`[0-9]+`)

// FuzzIdempotencyKey checks that IdempotencyKey never panics, that an
// accepted key is 1 to 255 printable ASCII characters that read back the
// same once quoted (and, when it can be, sent bare), and that an error is
// an InvalidArgument one of a fixed set of messages, so it never echoes
// the value.
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{
		`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, `"clkyoesmbgybucifusbbtdsbohtyuuwz"`,
		`"a\"b\\c"`, "abc-123", `"k1";a=1;b=?0;c="x";d=:aGk=:;e=1.5;f`, `"a", "b"`, `""`, `"abc`,
		`"a\nb"`, "\"a\x00b\"", "\"a\tb\"", "a\x7f", `"café"`, sfQuote(strings.Repeat("k", 256)),
		`"k" ;a`, `"k";A`, `"k";a=1.`, `("a")`, " \t\"k\" ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		key, err := IdempotencyKey(http.Header{HeaderIdempotencyKey: {v}}, HeaderIdempotencyKey)
		if err != nil {
			var le *lock.Error
			if !errors.As(err, &le) || le.Code != lock.CodeInvalidArgument || le.Op != "key" {
				t.Fatalf("IdempotencyKey(%q) error %v: want an InvalidArgument error with Op key", v, err)
			}
			if !idemMessages[digitRuns.ReplaceAllString(le.Msg, "N")] {
				t.Fatalf("IdempotencyKey(%q) error message %q is not a known one", v, le.Msg)
			}
			if key != "" {
				t.Fatalf("IdempotencyKey(%q) = %q with an error", v, key)
			}
			return
		}
		if len(key) < 1 || len(key) > MaxIdempotencyKeyLen {
			t.Fatalf("IdempotencyKey(%q) = %q: %d characters", v, key, len(key))
		}
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				t.Fatalf("IdempotencyKey(%q) = %q: byte %#x is not printable ASCII", v, key, key[i])
			}
		}
		q := sfQuote(key)
		if back, err := IdempotencyKey(http.Header{HeaderIdempotencyKey: {q}}, HeaderIdempotencyKey); err != nil || back != key {
			t.Fatalf("IdempotencyKey(%q) = %q; quoted as %q it reads %q, %v", v, key, q, back, err)
		}
		if !strings.ContainsAny(key, ` ,;"`) {
			if back, err := IdempotencyKey(http.Header{HeaderIdempotencyKey: {key}}, HeaderIdempotencyKey); err != nil || back != key {
				t.Fatalf("IdempotencyKey(%q) = %q; sent bare it reads %q, %v", v, key, back, err)
			}
		}
	})
}
