package ginlock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/lock"
	ginlock "github.com/syncguard-go/syncguard/middleware/gin"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestRefusalsAbortWithErrors: a busy key and a missing key abort the
// context with guard's problem, put the refusal on c.Errors, and
// leave gin's writer reporting the answer, for the middleware in front.
func TestRefusalsAbortWithErrors(t *testing.T) {
	b := guardtest.NewBackend(t)
	l, err := b.Acquire(context.Background(), "busy:POST /orders::k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), l.ID) })
	mw, err := ginlock.New(b, ginlock.FromIdempotencyKey(), ginlock.WithPrefix("busy:"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc   string
		key    string
		status int
		is     func(error) bool
	}{
		{"busy", "k", http.StatusConflict, func(err error) bool { return errors.Is(err, lock.ErrLocked) }},
		{"no key", "", http.StatusBadRequest, func(err error) bool { return lock.CodeOf(err) == lock.CodeInvalidArgument }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var aborted bool
			var errs []*gin.Error
			var front state
			var ran atomic.Bool
			r := gin.New()
			r.Use(func(c *gin.Context) {
				c.Next()
				aborted, errs, front = c.IsAborted(), c.Errors, stateOf(c.Writer)
			})
			r.POST("/orders", mw, func(c *gin.Context) { ran.Store(true) })
			req := httptest.NewRequest(http.MethodPost, "/orders", nil)
			if tt.key != "" {
				req.Header.Set(guard.HeaderIdempotencyKey, tt.key)
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Header().Get("Content-Type") != guard.ProblemContentType || ran.Load() {
				t.Errorf("%d %s %q (handler ran: %v), want a %d problem", rec.Code, rec.Header().Get("Content-Type"), rec.Body, ran.Load(), tt.status)
			}
			if !aborted || len(errs) != 1 || !tt.is(errs[0].Err) || errs[0].Type != gin.ErrorTypePrivate {
				t.Errorf("aborted %v, c.Errors %v; want aborted with the refusal", aborted, errs)
			}
			if want := (state{tt.status, rec.Body.Len(), true}); front != want {
				t.Errorf("writer in front: %+v, want %+v", front, want)
			}
		})
	}
}

// TestCustomBusyHandler: a busy handler written the gin way answers.
func TestCustomBusyHandler(t *testing.T) {
	b := guardtest.NewBackend(t)
	l, err := b.Acquire(context.Background(), "POST /orders::k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), l.ID) })
	mw, err := ginlock.New(b,
		ginlock.FromIdempotencyKey(),
		ginlock.WithBusyHandler(func(c *gin.Context, retryAfter time.Duration, err error) {
			c.AbortWithStatusJSON(http.StatusTooManyRequests, gin.H{"retry_after": retryAfter.Seconds()})
		}))
	if err != nil {
		t.Fatal(err)
	}
	r := gin.New()
	r.POST("/orders", mw, func(c *gin.Context) { t.Error("the handler ran on a busy key") })
	req := httptest.NewRequest(http.MethodPost, "/orders", nil)
	req.Header.Set(guard.HeaderIdempotencyKey, "k")
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests || rec.Body.String() != `{"retry_after":1}` {
		t.Errorf("%d %q, want the custom 429", rec.Code, rec.Body)
	}
}

// TestErrorsLeftToFront: in replay mode a handler that only adds to
// c.Errors leaves the answer to the error middleware in front, as
// without ginlock; nothing is stored, so a retry runs again.
func TestErrorsLeftToFront(t *testing.T) {
	var runs atomic.Int32
	r := gin.New()
	r.Use(func(c *gin.Context) {
		c.Next()
		if len(c.Errors) > 0 && !c.Writer.Written() {
			c.JSON(http.StatusUnprocessableEntity, gin.H{"error": c.Errors.Last().Error()})
		}
	})
	r.POST("/orders", replayMW(t), func(c *gin.Context) {
		runs.Add(1)
		_ = c.Error(errors.New("no such item"))
	})
	for i := range 2 {
		req := httptest.NewRequest(http.MethodPost, "/orders", nil)
		req.Header.Set(guard.HeaderIdempotencyKey, "k")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnprocessableEntity || rec.Body.String() != `{"error":"no such item"}` || rec.Header().Get(guard.HeaderReplayed) != "" {
			t.Errorf("request %d: %d %q, want the front's 422, not replayed", i+1, rec.Code, rec.Body)
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2: nothing was stored", n)
	}
}

// TestHijackAsGin: in replay mode c.Writer.Hijack refuses once the body
// is written, as gin's writer does, and hijacks before.
func TestHijackAsGin(t *testing.T) {
	for _, written := range []bool{false, true} {
		hijacked := make(chan error, 2)
		h := func(c *gin.Context) {
			if written {
				_, _ = c.Writer.WriteString("x")
			}
			conn, rw, err := c.Writer.Hijack()
			hijacked <- err
			if err == nil {
				_, _ = rw.WriteString("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
				_ = rw.Flush()
				_ = conn.Close()
			}
		}
		for _, mw := range []gin.HandlerFunc{nil, replayMW(t)} {
			_ = newProbe(t, false, http.MethodPost, mw, h).send(t, http.MethodPost, "k")
			if err := <-hijacked; (err != nil) != written {
				t.Errorf("written %v, ginlock %v: Hijack error %v", written, mw != nil, err)
			}
		}
	}
}
