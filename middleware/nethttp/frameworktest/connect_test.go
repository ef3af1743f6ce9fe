package httplock_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

const createOrder = "/orders.v1.OrderService/CreateOrder"

// README: connect-answers
// Connect's unary protocol answers an error with its HTTP status and a
// JSON body {code, message}; connect.ErrorWriter writes it in the
// request's protocol, so Connect clients decode the refusals.
var connectErrors = connect.NewErrorWriter()

// connectCodes maps guard's answer statuses to Connect codes.
var connectCodes = map[int]connect.Code{
	http.StatusBadRequest:            connect.CodeInvalidArgument,
	http.StatusUnauthorized:          connect.CodeUnauthenticated,
	http.StatusConflict:              connect.CodeAborted, // busy, or completed without a stored response
	http.StatusRequestEntityTooLarge: connect.CodeResourceExhausted,
	http.StatusUnprocessableEntity:   connect.CodeFailedPrecondition, // the key is another request's
	http.StatusTooManyRequests:       connect.CodeResourceExhausted,
	http.StatusServiceUnavailable:    connect.CodeUnavailable,
}

func writeConnectError(w http.ResponseWriter, r *http.Request, p guard.Problem) {
	code, ok := connectCodes[p.Status]
	if !ok {
		code = connect.CodeInternal
	}
	_ = connectErrors.Write(w, r, connect.NewError(code, errors.New(p.Detail)))
}

func connectBusy(w http.ResponseWriter, r *http.Request, retryAfter time.Duration, err error) {
	w.Header().Set("Retry-After", guard.RetryAfterValue(retryAfter))
	writeConnectError(w, r, guard.BusyProblem(retryAfter, err))
}

func connectError(w http.ResponseWriter, r *http.Request, err error) {
	writeConnectError(w, r, guard.ErrorProblem(err))
}

// END README

// TestConnectUnary: a Connect unary RPC behind httplock in replay mode,
// over HTTP/1.1 and HTTP/2: a retry gets the stored response, a
// concurrent duplicate and a reused key get Connect errors the client
// decodes.
func TestConnectUnary(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("HTTP/2 %v", h2), func(t *testing.T) {
			t.Parallel()
			var runs atomic.Int32
			started, finish := make(chan struct{}), make(chan struct{})
			svc := connect.NewUnaryHandler(createOrder, func(_ context.Context, req *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error) {
				if runs.Add(1) == 1 {
					close(started)
					<-finish
				}
				return connect.NewResponse(wrapperspb.String("order for " + req.Msg.GetValue())), nil
			})
			srv := connectServer(t, h2, connectMux(t, svc))
			client := connect.NewClient[wrapperspb.StringValue, wrapperspb.StringValue](srv.Client(), srv.URL+createOrder)
			call := func(key, item string) (*connect.Response[wrapperspb.StringValue], error) {
				req := connect.NewRequest(wrapperspb.String(item))
				req.Header().Set(guard.HeaderIdempotencyKey, key)
				return client.CallUnary(context.Background(), req)
			}

			firstDone := make(chan error, 1)
			go func() {
				res, err := call("k", "book")
				if err == nil && res.Msg.GetValue() != "order for book" {
					err = fmt.Errorf("first call: %q", res.Msg.GetValue())
				}
				firstDone <- err
			}()
			<-started
			_, err := call("k", "book")
			checkConnectError(t, "a duplicate in flight", err, connect.CodeAborted, "Retry-After")
			close(finish)
			if err := <-firstDone; err != nil {
				t.Fatal(err)
			}
			res, err := call("k", "book")
			if err != nil || res.Msg.GetValue() != "order for book" || res.Header().Get(guard.HeaderReplayed) != "true" {
				t.Errorf("retry: %v, %v; want the stored response, replayed", res, err)
			}
			_, err = call("k", "lamp")
			checkConnectError(t, "the key reused", err, connect.CodeFailedPrecondition, "")
			if n := runs.Load(); n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
		})
	}
}

// connectMux serves svc behind httplock in replay mode with the Connect
// answers, on a ServeMux (Connect's own registration).
func connectMux(t *testing.T, svc http.Handler) *http.ServeMux {
	mw, err := httplock.New(guardtest.NewBackend(t),
		httplock.FromIdempotencyKey(),
		httplock.Unscoped(), // a test: a real service scopes keys to the caller
		httplock.WithReplay(guard.DefaultReplayTTL),
		httplock.WithBusyHandler(connectBusy),
		httplock.WithErrorHandler(connectError))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(createOrder, mw(svc))
	return mux
}

func connectServer(t *testing.T, h2 bool, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func checkConnectError(t *testing.T, desc string, err error, code connect.Code, header string) {
	t.Helper()
	var ce *connect.Error
	switch {
	case !errors.As(err, &ce):
		t.Errorf("%s: %v, want a *connect.Error", desc, err)
	case ce.Code() != code || ce.Message() == "":
		t.Errorf("%s: %v (code %v), want %v with a message", desc, err, ce.Code(), code)
	case header != "" && ce.Meta().Get(header) == "":
		t.Errorf("%s: no %s in %v", desc, header, ce.Meta())
	}
}

// docs/http.md's Connect snippet.
func readmeConnect(backend lock.Backend, userID httplock.ScopeFunc, mux *http.ServeMux,
	create func(context.Context, *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error)) error {
	// README: connect
	mw, err := httplock.New(backend,
		httplock.FromIdempotencyKey(),
		httplock.WithScope(userID),
		httplock.WithReplay(guard.DefaultReplayTTL),
		httplock.WithBusyHandler(connectBusy),
		httplock.WithErrorHandler(connectError))
	if err != nil {
		return err
	}
	mux.Handle(createOrder, mw(connect.NewUnaryHandler(createOrder, create)))
	// END README
	return nil
}
