package cli

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

// bodyPreview is how much of a stored body show prints.
const bodyPreview = 80

// responseShow is a stored response (a replay record) as show prints it.
type responseShow struct {
	Fence     lock.Fence  `json:"fence"`
	Status    int         `json:"status"`
	Completed bool        `json:"completed,omitempty"` // the request completed; its response was not stored
	Header    http.Header `json:"header,omitempty"`
	Trailer   http.Header `json:"trailer,omitempty"`
	BodyBytes int         `json:"bodyBytes"`
	// BodyText is the start of the body when it is text (UTF-8 without
	// control characters but tab and newlines); "" otherwise.
	BodyText string `json:"bodyText,omitempty"`
}

// newResponseShow decodes a record's value; nil when it is not a record
// (wire.DecodeRecord).
func newResponseShow(v []byte) *responseShow {
	r, err := wire.DecodeRecord(v)
	if err != nil {
		return nil
	}
	rs := &responseShow{Fence: r.Fence, Status: r.Status, Completed: r.Completed, Header: r.Header,
		Trailer: r.Trailer, BodyBytes: len(r.Body)}
	if text(r.Body) {
		b := r.Body
		if len(b) > bodyPreview {
			b = b[:bodyPreview]
			for !utf8.Valid(b) { // a rune cut in two
				b = b[:len(b)-1]
			}
		}
		rs.BodyText = string(b)
	}
	return rs
}

// text reports whether b reads as text.
func text(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return true
}

// print writes the response's headers, trailers and body as show rows.
func (r *responseShow) print(row func(name, format string, args ...any)) {
	for _, h := range []struct {
		label string
		h     http.Header
	}{{"  header", r.Header}, {"  trailer", r.Trailer}} {
		for _, name := range slices.Sorted(maps.Keys(h.h)) {
			row(h.label, "%s: %s", name, strings.Join(h.h[name], ", "))
		}
	}
	switch {
	case r.BodyBytes == 0:
		row("  body", "empty")
	case r.BodyText == "":
		row("  body", "%d bytes, not text", r.BodyBytes)
	default:
		more := ""
		if len(r.BodyText) < r.BodyBytes {
			more = "..."
		}
		row("  body", "%d bytes: %s%s", r.BodyBytes, strconv.Quote(r.BodyText), more)
	}
}
