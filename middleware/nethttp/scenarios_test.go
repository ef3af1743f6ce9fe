package httplock_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// TestScenarios runs the shared middleware suite through httplock.
func TestScenarios(t *testing.T) {
	guardtest.Run(t, guardtest.Adapter{New: build})
}

func build(s guardtest.Setup) (http.Handler, error) {
	opts := []httplock.Option{
		httplock.WithPrefix(s.Prefix),
		httplock.WithWait(s.Wait),
		httplock.WithFailOpen(s.FailOpen),
	}
	if s.TTL != 0 {
		opts = append(opts, httplock.WithTTL(s.TTL)) // WithTTL(0) is an error
	}
	if s.Custom {
		opts = append(opts,
			httplock.WithBusyHandler(func(w http.ResponseWriter, _ *http.Request, retryAfter time.Duration, err error) {
				guardtest.WriteCustomBusy(w, retryAfter, err)
			}),
			httplock.WithErrorHandler(func(w http.ResponseWriter, _ *http.Request, err error) {
				guardtest.WriteCustomError(w, err)
			}))
	}
	if s.Skip != nil {
		opts = append(opts, httplock.WithSkipper(s.Skip))
	}
	if s.NoRouteScope {
		opts = append(opts, httplock.WithRouteScope(false))
	}
	if s.RouteScope {
		opts = append(opts, httplock.WithRouteScope(true))
	}
	if s.Scope != nil {
		opts = append(opts, httplock.WithScope(s.Scope))
	}
	if s.Public {
		opts = append(opts, httplock.Unscoped())
	}
	if s.Limit != 0 {
		opts = append(opts, httplock.WithLimit(s.Limit)) // WithLimit(0) is an error
	}
	if r := s.Replay; r != nil {
		ttl := r.TTL
		if ttl == 0 {
			ttl = guard.DefaultReplayTTL
		}
		opts = append(opts, httplock.WithReplay(ttl))
		if r.Headers != nil {
			opts = append(opts, httplock.WithReplayHeaders(r.Headers...))
		}
		if r.MaxBody != 0 {
			opts = append(opts, httplock.WithReplayMaxBody(r.MaxBody))
		}
		if r.MaxRequestBody != 0 {
			opts = append(opts, httplock.WithReplayMaxRequestBody(r.MaxRequestBody))
		}
		if r.Fingerprint != nil {
			opts = append(opts, httplock.WithFingerprint(r.Fingerprint))
		}
		if r.Statuses != nil {
			opts = append(opts, httplock.WithReplayStatuses(r.Statuses))
		}
	}
	var key httplock.KeyFunc
	if !s.NoKey {
		key = httplock.FromHeader(guardtest.Header)
	}
	mw, err := httplock.New(s.Backend, key, opts...)
	if err != nil {
		return nil, err
	}
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, ok := lock.LeaseFrom(r.Context())
		s.Handler(w, r, l, ok)
	}))
	mux := http.NewServeMux()
	for _, route := range guardtest.RoutesOf(s) {
		mux.Handle(route, h) // r.Pattern: the route, for the key's scope
	}
	return mux, nil
}

// BenchmarkAdapter compares httplock with a bare ServeMux (guardtest.Bench).
func BenchmarkAdapter(b *testing.B) {
	guardtest.Bench(b, guardtest.Adapter{New: build}, func(s guardtest.Setup) http.Handler {
		mux := http.NewServeMux()
		for _, route := range guardtest.RoutesOf(s) {
			mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) { s.Handler(w, r, lock.Lease{}, false) })
		}
		return mux
	})
}

// TestScenariosACL runs a part of the suite through httplock as the
// application's Redis ACL user of docs/acl.md.
func TestScenariosACL(t *testing.T) {
	guardtest.RunACL(t, guardtest.Adapter{New: build})
}
