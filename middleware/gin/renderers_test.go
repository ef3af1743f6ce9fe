package ginlock_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/middleware/guard"
)

// renderers are gin's ways to answer, each as a handler.
func renderers(t *testing.T) []struct {
	desc, method string
	h            gin.HandlerFunc
} {
	file := filepath.Join(t.TempDir(), "order.txt")
	if err := os.WriteFile(file, []byte("order 1\nshipped\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []struct {
		desc, method string
		h            gin.HandlerFunc
	}{
		{"JSON", http.MethodPost, func(c *gin.Context) { c.JSON(http.StatusCreated, gin.H{"id": 1, "item": "<book>"}) }},
		{"String", http.MethodPost, func(c *gin.Context) { c.String(http.StatusAccepted, "order %d queued", 1) }},
		{"Data", http.MethodPost, func(c *gin.Context) { c.Data(http.StatusOK, "application/octet-stream", []byte{0, 0xff, 'o', 0xfe}) }},
		{"Stream", http.MethodPost, func(c *gin.Context) {
			n := 0
			c.Stream(func(w io.Writer) bool {
				n++
				fmt.Fprintf(w, "chunk %d\n", n)
				return n < 3
			})
		}},
		{"File", http.MethodPost, func(c *gin.Context) { c.File(file) }},
		{"Redirect", http.MethodGet, func(c *gin.Context) { c.Redirect(http.StatusSeeOther, "/orders/1") }},
		{"Status and WriteHeaderNow, no body", http.MethodPost, func(c *gin.Context) {
			c.Status(http.StatusAccepted)
			c.Writer.WriteHeaderNow()
		}},
		{"Status alone", http.MethodPost, func(c *gin.Context) { c.Status(http.StatusNoContent) }},
		{"Header after Status, then WriteString", http.MethodPost, func(c *gin.Context) {
			c.Status(http.StatusCreated)
			c.Header("Content-Type", "text/csv")
			_, _ = c.Writer.WriteString("a,b\n")
		}},
	}
}

// TestReplayRenderers: whatever gin renderer the handler used, the first
// answer through ginlock is what gin alone answers, its replay has the
// same status, body and allow-listed headers byte for byte, and gin's
// writer reports Status, Size and Written as gin alone does, in the
// handler and in a middleware in front (there for the replay too).
func TestReplayRenderers(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		for _, r := range renderers(t) {
			t.Run(fmt.Sprintf("%s, HTTP/2 %v", r.desc, h2), func(t *testing.T) {
				t.Parallel()
				var runs atomic.Int32
				h := func(c *gin.Context) { runs.Add(1); r.h(c) }
				want := newProbe(t, h2, r.method, nil, h).do(t, r.method, "k")
				p := newProbe(t, h2, r.method, replayMW(t), h)
				first, replay := p.do(t, r.method, "k"), p.do(t, r.method, "k")
				for _, got := range []reply{first, replay} {
					if got.err != nil || got.status != want.status || got.body != want.body {
						t.Errorf("%d %q (%v), want gin's %d %q", got.status, got.body, got.err, want.status, want.body)
					}
					for _, name := range []string{"Content-Type", "Location", "Last-Modified"} {
						if g, w := got.header.Get(name), want.header.Get(name); g != w {
							t.Errorf("%s = %q, want gin's %q", name, g, w)
						}
					}
				}
				if replay.header.Get(guard.HeaderReplayed) != "true" || runs.Load() != 2 {
					t.Errorf("second answer replayed %q after %d runs (gin's and one), want a replay", replay.header.Get(guard.HeaderReplayed), runs.Load())
				}
				// gin alone sends a status without a body once the middleware
				// in front returned; ginlock sends it as the chain ends, so
				// that the answer stored is the answer sent.
				wantOuter := want.outer
				if !wantOuter.written {
					wantOuter.size, wantOuter.written = 0, true
				}
				if first.inner != want.inner || first.outer != wantOuter {
					t.Errorf("writer states in the handler and in front: %+v, %+v; want %+v, %+v", first.inner, first.outer, want.inner, wantOuter)
				}
				if s := (state{want.status, len(want.body), true}); replay.outer != s {
					t.Errorf("writer state in front of a replay: %+v, want %+v", replay.outer, s)
				}
			})
		}
	}
}
