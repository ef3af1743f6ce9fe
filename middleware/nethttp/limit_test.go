package httplock_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// TestLimitWrappingServeMux: middleware in front of a ServeMux sees no
// pattern (the escaped path stands in for the route), so a route in the
// key would make every id in the path a limit of its own. A limit leaves
// the route out by default: one user's exports of ten reports share the
// user's 2 slots.
func TestLimitWrappingServeMux(t *testing.T) {
	const n, limit = 10, 2
	b := guardtest.NewBackend(t)
	mw, err := httplock.New(b, httplock.FromHeader("X-Test-User"), httplock.WithLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var inside, peak atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /reports/{id}/export", func(w http.ResponseWriter, r *http.Request) {
		now := inside.Add(1)
		defer inside.Add(-1)
		for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
		}
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
	})
	h := mw(mux) // in front of the mux
	var wg sync.WaitGroup
	var admitted, refused atomic.Int32
	var once sync.Once
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/reports/%d/export", i), nil)
			req.Header.Set("X-Test-User", "alice")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK:
				admitted.Add(1)
			case http.StatusTooManyRequests:
				if refused.Add(1) == n-limit {
					once.Do(func() { close(release) })
				}
			default:
				t.Errorf("status %d %q", rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	once.Do(func() { close(release) })
	if admitted.Load() != limit || peak.Load() > limit {
		t.Errorf("admitted %d (peak %d) across %d paths, want %d", admitted.Load(), peak.Load(), n, limit)
	}
}
