package ginlock

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/gin-gonic/gin"
)

var errWritten = errors.New("ginlock: response body already written")

// writer is c.Writer in replay mode: gin's bookkeeping (Status, Size,
// Written) over the guard's capture, which holds the response back.
// Like gin's writer it sends the status at the first write, so headers
// set after c.Status still go out. Header, CloseNotify and Pusher are
// gin's.
type writer struct {
	gin.ResponseWriter
	cw     http.ResponseWriter // the capture
	status int
	size   int // -1 until the status is sent
}

func (w *writer) WriteHeader(code int) {
	if code > 0 && !w.Written() {
		w.status = code
	}
}

func (w *writer) WriteHeaderNow() {
	if !w.Written() {
		w.size = 0
		w.cw.WriteHeader(w.status)
	}
}

func (w *writer) Write(p []byte) (int, error) {
	w.WriteHeaderNow()
	n, err := w.cw.Write(p)
	w.size += n
	return n, err
}

func (w *writer) WriteString(s string) (int, error) {
	w.WriteHeaderNow()
	n, err := io.WriteString(w.cw, s)
	w.size += n
	return n, err
}

func (w *writer) Status() int   { return w.status }
func (w *writer) Size() int     { return w.size }
func (w *writer) Written() bool { return w.size != -1 }

// Flush sends what the capture holds (it is then not marked) and
// flushes.
func (w *writer) Flush() {
	w.WriteHeaderNow()
	_ = http.NewResponseController(w.cw).Flush()
}

// Hijack hijacks the connection, as gin's writer allows: before any
// body is written. The response is then not stored.
func (w *writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.size > 0 {
		return nil, nil, errWritten
	}
	w.size = 0
	return http.NewResponseController(w.cw).Hijack()
}

// Unwrap returns the capture, for http.ResponseController.
func (w *writer) Unwrap() http.ResponseWriter { return w.cw }

// eager is gin's writer for the guard: WriteHeader sends the status at
// once, as net/http's does, where gin's waits for the first write.
type eager struct{ gin.ResponseWriter }

func (e eager) WriteHeader(code int) {
	e.ResponseWriter.WriteHeader(code)
	e.ResponseWriter.WriteHeaderNow()
}

// Unwrap returns gin's writer, for http.ResponseController.
func (e eager) Unwrap() http.ResponseWriter { return e.ResponseWriter }
