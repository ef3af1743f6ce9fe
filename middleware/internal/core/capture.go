package core

import (
	"bufio"
	"bytes"
	"maps"
	"net"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/syncguard-go/syncguard/middleware/guard"
)

// capture is the ResponseWriter a handler writes to in replay mode. It
// holds the response back (status, headers, body) until Serve knows
// whether the record was stored ([capture.send], after the release), so
// that a response not stored can be marked (HeaderNotStored) before its
// headers leave, and so that a handler that panics sends nothing of what
// it wrote. It keeps a copy of the response for the record.
//
// It sends early when the handler flushes (its headers then go out
// unmarked) and when the body passes the limit (marked NotStoredTooLarge:
// the record then says only that the request completed; or
// NotStoredStatus for a status that is not stored). Header returns w's
// own map throughout, as net/http's does: trailers (declared in the
// Trailer header, or under http.TrailerPrefix) may be set in it at any
// time, and go out after the body as net/http sends them. A handler that
// hijacks the connection stores nothing.
type capture struct {
	w        http.ResponseWriter
	max      int64
	storable func(status int) bool
	status   int         // 0 until the handler sets it
	header   http.Header // as at WriteHeader: what is sent, as with net/http
	body     bytes.Buffer
	sent     bool // status and headers went to w
	tooBig   bool
	flushed  bool
	hijacked bool
	before   http.Header // w's headers when the handler got c, restored by discard
}

func newCapture(w http.ResponseWriter, rp *replay) *capture {
	c := &capture{max: rp.maxBody, storable: rp.storable}
	if w != nil {
		c.bind(w)
	}
	return c
}

// bind makes c write to w.
func (c *capture) bind(w http.ResponseWriter) {
	c.w = w
	c.before = w.Header().Clone()
}

// Sent reports whether w is a replay-mode writer that has sent the status
// (and so perhaps some of the body) to the client: such a response cannot
// be taken back, and a handler that panics then aborts the connection.
func Sent(w http.ResponseWriter) bool {
	c, ok := w.(*capture)
	return ok && c.sent
}

// discard drops what the handler wrote and had not sent (a handler that
// panicked), and gives w back the headers it had before the handler ran,
// so that a recovering middleware in front answers on a clean response.
func (c *capture) discard() {
	c.body = bytes.Buffer{}
	if c.sent || c.hijacked {
		return
	}
	c.status = 0
	h := c.w.Header()
	clear(h)
	maps.Copy(h, c.before)
}

// Header returns w's header map. Changes after WriteHeader reach the
// client only for trailers, as with net/http.
func (c *capture) Header() http.Header { return c.w.Header() }

// WriteHeader records the status; informational (1xx) statuses pass
// straight through.
func (c *capture) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		c.w.WriteHeader(code)
		return
	}
	if c.status != 0 || c.hijacked {
		return // superfluous; net/http would log it, the response keeps the first
	}
	c.status = code
	c.header = c.w.Header().Clone()
}

// Write buffers p, or sends it when the headers are out.
func (c *capture) Write(p []byte) (int, error) {
	if c.hijacked {
		return 0, http.ErrHijacked
	}
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.tooBig && int64(c.body.Len()+len(p)) > c.max {
		if !c.sent {
			mark := guard.NotStoredTooLarge
			if !c.storable(c.status) {
				mark = guard.NotStoredStatus
			}
			if err := c.sendHead(mark); err != nil {
				return 0, err
			}
		}
		c.tooBig = true
		c.body = bytes.Buffer{}
	}
	if c.sent {
		if !c.tooBig {
			c.body.Write(p)
		}
		return c.w.Write(p)
	}
	return c.body.Write(p)
}

// Flush sends what is held and flushes w.
func (c *capture) Flush() {
	if c.hijacked {
		return
	}
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.flushed = true
	_ = c.sendHead("")
	_ = http.NewResponseController(c.w).Flush()
}

// Hijack hijacks w's connection (through http.ResponseController, so a
// wrapper in between is found) and marks the response as not stored:
// what goes over a hijacked connection is not a response to replay.
func (c *capture) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(c.w).Hijack()
	if err == nil {
		c.hijacked = true
		c.body = bytes.Buffer{}
	}
	return conn, rw, err
}

// Unwrap returns w, for http.ResponseController.
func (c *capture) Unwrap() http.ResponseWriter { return c.w }

// sendHead writes the status, the headers as they were at WriteHeader
// (with HeaderNotStored: mark, unless mark is "") and the held body to w,
// once. The trailers set so far under http.TrailerPrefix go with the
// headers (net/http does not send them as headers, but then sends the
// body chunked and so sends trailers whatever its size, as a replay
// does); then w's map is again the one the handler has been writing, so
// that net/http finds the trailers in it as it would without the capture.
func (c *capture) sendHead(mark string) error {
	if c.sent {
		return nil
	}
	c.sent = true
	h := c.w.Header()
	live := h.Clone()
	clear(h)
	maps.Copy(h, c.header)
	for name, vs := range live {
		if strings.HasPrefix(name, http.TrailerPrefix) {
			h[name] = vs
		}
	}
	if mark != "" {
		live.Set(guard.HeaderNotStored, mark)
		h.Set(guard.HeaderNotStored, mark)
	}
	c.w.WriteHeader(c.status)
	clear(h)
	maps.Copy(h, live)
	if c.body.Len() > 0 {
		_, err := c.w.Write(c.body.Bytes())
		return err
	}
	return nil
}

// ended completes the response of a handler that returned: one that
// wrote nothing answers 200 with the headers it set, as net/http does.
func (c *capture) ended() {
	if c.status == 0 && !c.hijacked {
		c.WriteHeader(http.StatusOK)
	}
}

// send sends the rest of the response once the handler has returned:
// what is still held, marked HeaderNotStored: mark unless mark is "" (a
// response already sent keeps its headers). The trailers are in w's
// header map, where net/http finds them.
func (c *capture) send(mark string) {
	if c.hijacked || c.status == 0 {
		return
	}
	_ = c.sendHead(mark)
}

// trailers returns the trailers the handler has set, as net/http reads
// them from the header map when the handler returns: the names declared
// in the Trailer header at WriteHeader, with their values in the map, and
// the names under http.TrailerPrefix. Nil before WriteHeader.
func (c *capture) trailers() http.Header {
	if c.header == nil {
		return nil
	}
	var t http.Header
	add := func(name string, vs []string) {
		if len(vs) == 0 {
			return
		}
		if t == nil {
			t = http.Header{}
		}
		cn := http.CanonicalHeaderKey(name)
		t[cn] = append(t[cn], vs...)
	}
	h := c.w.Header()
	for name, vs := range h {
		if after, ok := strings.CutPrefix(name, http.TrailerPrefix); ok {
			add(after, vs)
		}
	}
	for _, line := range c.header.Values("Trailer") {
		for _, name := range strings.Split(line, ",") {
			// net/http ignores a declared name that may not be a trailer.
			if name = strings.TrimSpace(name); name != "" && httpguts.ValidTrailerHeader(name) {
				add(name, h.Values(name))
			}
		}
	}
	return t
}

// kind says what a captured response leaves behind.
type kind int

const (
	storeNothing   kind = iota // no record: a retry runs the handler
	storeResponse              // a record to replay
	storeCompleted             // a record that the request completed, without the response
)

// outcome returns what to store of the captured response, with the
// HeaderNotStored mark for a response that will not be replayed.
func (c *capture) outcome(rp *replay) (kind, string) {
	switch {
	case c.hijacked:
		return storeNothing, ""
	case !rp.storable(c.status):
		return storeNothing, guard.NotStoredStatus
	case c.tooBig:
		return storeCompleted, guard.NotStoredTooLarge
	}
	return storeResponse, ""
}
