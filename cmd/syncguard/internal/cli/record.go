package cli

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
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

// decodeRecord decodes the record v stored for st's key: a replayed
// response, an asynqlock Scheduler entry's record or a gocronlock
// Locker's; else st.Record keeps it as stored.
func (st *state) decodeRecord(v string) {
	b := []byte(v)
	if st.Response = newResponseShow(b); st.Response != nil {
		return
	}
	if st.Tick = newTickShow(st.Key, b); st.Tick != nil {
		return
	}
	if st.Run = newJobRunShow(b); st.Run != nil {
		return
	}
	st.Record = &v
}

// recordHead is the start of show's record row: the key, size and time
// left of the record.
func (st *state) recordHead() string {
	return fmt.Sprintf("%s: %d bytes, for %s more", display(st.RecordKey), st.RecordBytes, duration(ms(st.RecordTTLMs)))
}

// jobRunShow is a gocronlock Locker's record of a job's last run: its
// fence, and when its instance fired it by Redis's clock.
type jobRunShow struct {
	Fence lock.Fence `json:"fence"`
	Fired time.Time  `json:"fired"`
}

// newJobRunShow decodes v; nil when it is not a job run record
// (wire.DecodeJobRun).
func newJobRunShow(v []byte) *jobRunShow {
	r, err := wire.DecodeJobRun(v)
	if err != nil {
		return nil
	}
	return &jobRunShow{Fence: r.Fence, Fired: r.Fired}
}

// print prints the run as a show row after head.
func (r *jobRunShow) print(row printRow, head string, nowMs int64) {
	row("record", "%s: a gocron job's last run: fired %s (%s ago), fence %s", head,
		timestamp(r.Fired), duration(ms(age(nowMs, r.Fired.UnixMilli()))), r.Fence)
}
