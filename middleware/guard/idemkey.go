package guard

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// HeaderIdempotencyKey is the request header of the IETF httpapi
// Idempotency-Key draft.
const HeaderIdempotencyKey = "Idempotency-Key"

// MaxIdempotencyKeyLen is the longest idempotency key accepted, in
// characters (a key is ASCII).
const MaxIdempotencyKeyLen = 255

// IdempotencyKey returns the key in the header name of h as the IETF
// Idempotency-Key draft defines it: one line holding an RFC 8941 string
// ("k1", parameters ignored). A bare value (k1) is accepted too when it
// has no space, comma, semicolon or quote. The key is 1 to
// MaxIdempotencyKeyLen printable ASCII characters. Errors are
// InvalidArgument (Missing for no header) and never hold the value.
func IdempotencyKey(h http.Header, name string) (string, error) {
	vs := h.Values(name)
	if len(vs) > 1 {
		return "", idemError("the " + name + " header is sent on several header lines; a request carries one key")
	}
	if len(vs) == 0 {
		return "", Missing("header", name)
	}
	v := strings.Trim(vs[0], " \t")
	if v == "" {
		return "", Missing("header", name)
	}
	// No byte outside %x20-7E is valid anywhere in an Item, so one scan
	// gives the precise answer for both forms.
	for i := 0; i < len(v); i++ {
		if c := v[i]; c >= 0x80 {
			return "", idemError("the " + name + " header contains a non-ASCII character; a key is printable ASCII")
		} else if c < 0x20 || c == 0x7f {
			return "", idemError("the " + name + " header contains a control character; a key is printable ASCII")
		}
	}
	key := v
	if v[0] == '"' {
		k, rest, problem := sfString(v)
		if problem == "" {
			rest, problem = sfParams(rest)
		}
		if problem == "" && rest != "" {
			problem = "something other than parameters follows the string"
			if strings.HasPrefix(strings.TrimLeft(rest, " \t"), ",") {
				problem = "it holds several values; send one string"
			}
		}
		if problem != "" {
			return "", idemError("the " + name + " header is not a structured-field string: " + problem)
		}
		key = k
	} else if strings.ContainsAny(v, ` ,;"`) {
		return "", idemError("the " + name + ` header is neither a structured-field string nor a bare key: ` +
			`quote the key ("...") or send it without spaces, commas, semicolons or double quotes`)
	}
	switch {
	case key == "":
		return "", idemError("the key in the " + name + " header is empty")
	case len(key) > MaxIdempotencyKeyLen:
		return "", idemError("the key in the " + name + " header is " + strconv.Itoa(len(key)) +
			" characters; at most " + strconv.Itoa(MaxIdempotencyKeyLen))
	}
	return key, nil
}

// idemError is the error of a bad idempotency key header.
func idemError(msg string) error { return lockdriver.InvalidArgument("key", msg) }

// The functions below follow the parsing algorithms of RFC 8941 section
// 4.2. Each takes the input at the start of what it parses and returns
// what follows, and whether it parsed (ok, or problem "" and else why
// not). The input holds only %x20-7E (IdempotencyKey checked it).

// sfString parses the sf-string that starts s (s[0] is '"') and returns
// its unescaped value.
func sfString(s string) (val, rest, problem string) {
	var b strings.Builder
	start := 1 // s[start:i] is copied as is
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			if start == 1 { // no escape: no copy
				return s[1:i], s[i+1:], ""
			}
			b.WriteString(s[start:i])
			return b.String(), s[i+1:], ""
		case '\\':
			if i+1 == len(s) {
				return "", "", "the closing quote is missing"
			}
			if c := s[i+1]; c != '"' && c != '\\' {
				return "", "", `a backslash escapes only '"' or '\'`
			}
			b.WriteString(s[start:i])
			i++
			start = i
		}
	}
	return "", "", "the closing quote is missing"
}

// sfParams parses the parameters that start s, if any:
// *( ";" *SP key [ "=" bare-item ] ). RFC 8941 allows only SP, not HTAB,
// after ';', and nothing between the item and its first ';'.
func sfParams(s string) (rest, problem string) {
	const bad = "a parameter after the string is malformed"
	for s != "" && s[0] == ';' {
		s = strings.TrimLeft(s[1:], " ")
		var ok bool
		if s, ok = sfKey(s); !ok {
			return "", bad
		}
		if s != "" && s[0] == '=' {
			if s, ok = sfBareItem(s[1:]); !ok {
				return "", bad
			}
		}
	}
	return s, ""
}

// sfKey parses a key: ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" /
// "." / "*" ).
func sfKey(s string) (rest string, ok bool) {
	if s == "" || !(isLCAlpha(s[0]) || s[0] == '*') {
		return s, false
	}
	i := 1
	for i < len(s) && (isLCAlpha(s[i]) || isDigit(s[i]) || strings.IndexByte("_-.*", s[i]) >= 0) {
		i++
	}
	return s[i:], true
}

// sfBareItem parses a bare item of RFC 8941: an Integer, a Decimal, a
// String, a Token, a Byte Sequence or a Boolean. (The Date and Display
// String of RFC 9651 are not among them, as the draft cites RFC 8941.)
func sfBareItem(s string) (rest string, ok bool) {
	switch {
	case s == "":
		return s, false
	case s[0] == '-' || isDigit(s[0]):
		return sfNumber(s)
	case s[0] == '"':
		_, rest, problem := sfString(s)
		return rest, problem == ""
	case isAlpha(s[0]) || s[0] == '*':
		i := 1
		for i < len(s) && (isTChar(s[i]) || s[i] == ':' || s[i] == '/') {
			i++
		}
		return s[i:], true
	case s[0] == ':':
		return sfBinary(s)
	case s[0] == '?':
		if len(s) < 2 || (s[1] != '0' && s[1] != '1') {
			return s, false
		}
		return s[2:], true
	}
	return s, false
}

// sfNumber parses an Integer (at most 15 digits) or a Decimal (at most 12
// digits, '.', 1 to 3 digits), with an optional '-'.
func sfNumber(s string) (rest string, ok bool) {
	i := 0
	if s[0] == '-' {
		i++
	}
	if i == len(s) || !isDigit(s[i]) {
		return s, false
	}
	digits, dot := 0, -1 // dot: digits before the '.', -1 for an Integer
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			digits++
		case c == '.' && dot < 0:
			if digits > 12 {
				return s, false
			}
			dot = digits
			continue
		default:
			return sfNumberEnd(s, i, digits, dot)
		}
		if (dot < 0 && digits > 15) || (dot >= 0 && digits-dot > 3) {
			return s, false
		}
	}
	return sfNumberEnd(s, i, digits, dot)
}

// sfNumberEnd finishes sfNumber at s[i]: a Decimal needs a digit after
// its '.'.
func sfNumberEnd(s string, i, digits, dot int) (rest string, ok bool) {
	if dot >= 0 && digits == dot {
		return s, false
	}
	return s[i:], true
}

// sfBinary parses a Byte Sequence: ':' base64 ':'. Missing '=' padding is
// accepted, as RFC 8941 asks of parsers.
func sfBinary(s string) (rest string, ok bool) {
	end := strings.IndexByte(s[1:], ':')
	if end < 0 {
		return s, false
	}
	b64 := s[1 : 1+end]
	for i := 0; i < len(b64); i++ {
		if c := b64[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=' {
			return s, false
		}
	}
	if _, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "=")); err != nil {
		return s, false
	}
	return s[2+end:], true
}

func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || ('A' <= c && c <= 'Z') }

// isTChar reports whether c is a tchar of RFC 9110: a token character.
func isTChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
