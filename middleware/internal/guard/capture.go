package guard

import (
	"bytes"
	"maps"
	"net/http"
)

// capture is the ResponseWriter a handler writes to in replay mode. It
// holds the response back (status, headers, body) until the handler
// returns, flushes, or writes more than the body limit, then sends it on
// to w unchanged, and keeps a copy of what it sent for the record.
//
// Holding back lets it mark a response that passes the limit
// (HeaderNotStored) before its headers leave. A handler that flushes
// first sends its headers unmarked; its response is still stored when it
// ends within the limit.
type capture struct {
	w       http.ResponseWriter
	max     int64
	status  int         // 0 until the handler sets it
	header  http.Header // as at WriteHeader; later changes are not sent, as with net/http
	late    http.Header // what Header returns after WriteHeader
	body    bytes.Buffer
	sent    bool // status and headers went to w
	tooBig  bool
	flushed bool
}

func newCapture(w http.ResponseWriter, max int64) *capture { return &capture{w: w, max: max} }

// Header returns w's header map until WriteHeader, then a detached copy.
func (c *capture) Header() http.Header {
	if c.late != nil {
		return c.late
	}
	return c.w.Header()
}

// WriteHeader records the status; informational (1xx) statuses pass
// straight through.
func (c *capture) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		c.w.WriteHeader(code)
		return
	}
	if c.status != 0 {
		return // superfluous; net/http would log it, the response keeps the first
	}
	c.status = code
	c.header = c.w.Header().Clone()
	c.late = c.header.Clone()
}

// Write buffers p, or sends it when the headers are out.
func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.tooBig && int64(c.body.Len()+len(p)) > c.max {
		if !c.sent {
			c.header.Set(HeaderNotStored, NotStoredTooLarge)
			if err := c.send(); err != nil {
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
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.flushed = true
	_ = c.send()
	_ = http.NewResponseController(c.w).Flush()
}

// Unwrap returns w, for http.ResponseController.
func (c *capture) Unwrap() http.ResponseWriter { return c.w }

// send writes the status, the headers and the held body to w, once.
func (c *capture) send() error {
	if c.sent {
		return nil
	}
	c.sent = true
	h := c.w.Header()
	clear(h)
	maps.Copy(h, c.header)
	c.w.WriteHeader(c.status)
	if c.body.Len() > 0 {
		_, err := c.w.Write(c.body.Bytes())
		return err
	}
	return nil
}

// finish sends what is still held when the handler has returned (or
// panicked). A handler that wrote nothing answers 200 with the headers it
// set, as net/http does; nothing is sent then, so code outside may still
// write.
func (c *capture) finish() {
	if c.status == 0 {
		c.status = http.StatusOK
		c.header = c.w.Header().Clone()
		return
	}
	_ = c.send()
}

// response returns the captured response, or false when it must not be
// stored: a 5xx or a body over the limit.
func (c *capture) response() (status int, header http.Header, body []byte, ok bool) {
	if c.tooBig || !storable(c.status) {
		return 0, nil, nil, false
	}
	return c.status, c.header, c.body.Bytes(), true
}
