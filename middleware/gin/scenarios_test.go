package ginlock_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/lock"
	ginlock "github.com/syncguard-go/syncguard/middleware/gin"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestScenarios runs the shared middleware suite through a gin.Engine
// with gin's Recovery in front.
func TestScenarios(t *testing.T) {
	guardtest.Run(t, guardtest.Adapter{New: build, RecoversPanics: true, StatusAtFirstWrite: true})
}

func build(s guardtest.Setup) (http.Handler, error) {
	var key ginlock.KeyFunc
	if !s.NoKey {
		key = ginlock.FromHeader(guardtest.Header)
	}
	mw, err := ginlock.New(s.Backend, key, options(s)...)
	if err != nil {
		return nil, err
	}
	return newEngine(guardtest.RoutesOf(s), mw, func(c *gin.Context) {
		l, ok := lock.LeaseFrom(c.Request.Context())
		if gl, gok := ginlock.LeaseFrom(c); gl != l || gok != ok {
			panic(fmt.Sprintf("ginlock.LeaseFrom = %+v, %v; lock.LeaseFrom = %+v, %v", gl, gok, l, ok))
		}
		s.Handler(c.Writer, c.Request, l, ok)
	}), nil
}

// options are ginlock's options for s.
func options(s guardtest.Setup) []ginlock.Option {
	opts := []ginlock.Option{ginlock.WithPrefix(s.Prefix), ginlock.WithWait(s.Wait), ginlock.WithFailOpen(s.FailOpen)}
	if s.TTL != 0 {
		opts = append(opts, ginlock.WithTTL(s.TTL))
	}
	if s.Custom {
		opts = append(opts,
			ginlock.WithBusyHandler(func(c *gin.Context, retryAfter time.Duration, err error) {
				guardtest.WriteCustomBusy(c.Writer, retryAfter, err)
				c.Writer.WriteHeaderNow()
			}),
			ginlock.WithErrorHandler(func(c *gin.Context, err error) {
				guardtest.WriteCustomError(c.Writer, err)
				c.Writer.WriteHeaderNow()
			}))
	}
	if s.Skip != nil {
		opts = append(opts, ginlock.WithSkipper(func(c *gin.Context) bool { return s.Skip(c.Request) }))
	}
	switch {
	case s.NoRouteScope:
		opts = append(opts, ginlock.WithRouteScope(false))
	case s.RouteScope:
		opts = append(opts, ginlock.WithRouteScope(true))
	}
	if s.Scope != nil {
		opts = append(opts, ginlock.WithScope(func(c *gin.Context) (string, error) { return s.Scope(c.Request) }))
	}
	if s.Public {
		opts = append(opts, ginlock.Unscoped())
	}
	if s.Limit != 0 {
		opts = append(opts, ginlock.WithLimit(s.Limit))
	}
	if r := s.Replay; r != nil {
		opts = append(opts, replayOptions(r)...)
	}
	return opts
}

func replayOptions(r *guardtest.Replay) []ginlock.Option {
	ttl := r.TTL
	if ttl == 0 {
		ttl = guard.DefaultReplayTTL
	}
	opts := []ginlock.Option{ginlock.WithReplay(ttl)}
	if r.Headers != nil {
		opts = append(opts, ginlock.WithReplayHeaders(r.Headers...))
	}
	if r.MaxBody != 0 {
		opts = append(opts, ginlock.WithReplayMaxBody(r.MaxBody))
	}
	if r.MaxRequestBody != 0 {
		opts = append(opts, ginlock.WithReplayMaxRequestBody(r.MaxRequestBody))
	}
	if r.Fingerprint != nil {
		opts = append(opts, ginlock.WithFingerprint(func(c *gin.Context) (string, error) { return r.Fingerprint(c.Request) }))
	}
	if r.Statuses != nil {
		opts = append(opts, ginlock.WithReplayStatuses(r.Statuses))
	}
	return opts
}

// newEngine serves h behind gin's Recovery (quiet) and mw on routes, for
// every method.
func newEngine(routes []string, mw gin.HandlerFunc, h gin.HandlerFunc) *gin.Engine {
	r := gin.New()
	r.Use(gin.RecoveryWithWriter(io.Discard))
	for _, route := range routes {
		if mw != nil {
			r.Any(route, mw, h)
		} else {
			r.Any(route, h)
		}
	}
	return r
}

// BenchmarkAdapter compares ginlock with a bare gin.Engine
// (guardtest.Bench).
func BenchmarkAdapter(b *testing.B) {
	guardtest.Bench(b, guardtest.Adapter{New: build}, func(s guardtest.Setup) http.Handler {
		return newEngine(guardtest.RoutesOf(s), nil, func(c *gin.Context) {
			s.Handler(c.Writer, c.Request, lock.Lease{}, false)
		})
	})
}
