package ginlock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/lock"
	ginlock "github.com/syncguard-go/syncguard/middleware/gin"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// replayMW is ginlock in replay mode, keyed by Idempotency-Key, public.
func replayMW(t *testing.T, opts ...ginlock.Option) gin.HandlerFunc {
	t.Helper()
	opts = append([]ginlock.Option{ginlock.Unscoped(), ginlock.WithReplay(guard.DefaultReplayTTL)}, opts...)
	mw, err := ginlock.New(guardtest.NewBackend(t), ginlock.FromIdempotencyKey(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// state is what gin's writer reports: in the handler after it rendered,
// or in a middleware in front after the chain.
type state struct {
	status, size int
	written      bool
}

func stateOf(w gin.ResponseWriter) state { return state{w.Status(), w.Size(), w.Written()} }

// reply is an answer as a client read it, with the writer's states.
type reply struct {
	status          int
	header, trailer http.Header
	body            string
	err             error
	inner, outer    state
}

// probe serves h on method /orders, behind gin's Recovery, a middleware
// that reports the writer's states, and mw (nil: none).
type probe struct {
	srv    *httptest.Server
	states chan [2]state // in the handler, then in front
}

func newProbe(t *testing.T, h2 bool, method string, mw, h gin.HandlerFunc) *probe {
	p := &probe{states: make(chan [2]state, 1)}
	r := gin.New()
	r.Use(gin.RecoveryWithWriter(io.Discard), func(c *gin.Context) {
		c.Next()
		inner, _ := c.Get("inner")
		s, _ := inner.(state)
		select {
		case p.states <- [2]state{s, stateOf(c.Writer)}:
		default: // a request the test does not read
		}
	})
	chain := []gin.HandlerFunc{func(c *gin.Context) { h(c); c.Set("inner", stateOf(c.Writer)) }}
	if mw != nil {
		chain = append([]gin.HandlerFunc{mw}, chain...)
	}
	r.Handle(method, "/orders", chain...)
	p.srv = httptest.NewUnstartedServer(r)
	if h2 {
		p.srv.EnableHTTP2 = true
		p.srv.StartTLS()
	} else {
		p.srv.Start()
	}
	t.Cleanup(p.srv.Close)
	return p
}

// do sends method /orders with Idempotency-Key key and reads the answer
// and the writer's states.
func (p *probe) do(t *testing.T, method, key string) reply {
	t.Helper()
	r := p.send(t, method, key)
	s := <-p.states
	r.inner, r.outer = s[0], s[1]
	return r
}

// send sends method /orders with Idempotency-Key key and reads the answer.
func (p *probe) send(t *testing.T, method, key string) reply {
	t.Helper()
	req, err := http.NewRequest(method, p.srv.URL+"/orders", strings.NewReader("b"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(guard.HeaderIdempotencyKey, key)
	client := *p.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := client.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, trailer: res.Trailer, body: string(b), err: err}
}

// TestNilOptionsAndMust: nil options are skipped, and Must panics with
// New's InvalidArgument error, which names the nil key function.
func TestNilOptionsAndMust(t *testing.T) {
	if _, err := ginlock.New(guardtest.NopBackend{}, ginlock.FromIdempotencyKey(), nil, ginlock.WithTTL(time.Minute), nil); err != nil {
		t.Errorf("New with nil options: %v", err)
	}
	defer func() {
		err, _ := recover().(error)
		if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), "key function argument") {
			t.Errorf("Must without a key: recovered %v, want an InvalidArgument error naming the key function argument", err)
		}
	}()
	ginlock.Must(guardtest.NopBackend{}, nil)
}
