// Grpc shows grpclock guarding a gRPC service over a real HTTP/2
// connection: shop.Payments/Pay is locked on the idempotency-key metadata
// of the user who calls it, and its first response (message, metadata,
// status) is stored, so a payment runs once however many times it is sent.
// The user comes from an authentication interceptor in front (a stand-in
// that accepts "authorization: Bearer <user>"), never from metadata the
// client chooses freely.
//
//  1. A burst: 8 identical calls at once. One runs; the others wait for
//     it (WithWait) and get its response, marked idempotent-replayed.
//  2. grpc-go's retry policy: the first attempt's response is lost after
//     the handler ran (a lossy interceptor answers UNAVAILABLE instead);
//     the client retries and gets the stored response, without a second run.
//  3. The key reused with another amount: FAILED_PRECONDITION.
//  4. go-grpc-middleware's ratelimit with grpclock.NewLimiter: at most 3
//     calls per user per minute; the 4th and 5th get RESOURCE_EXHAUSTED
//     with a pushback.
//
// It runs on an embedded Redis (miniredis) unless REDIS_URL is set:
//
//	go run ./examples/grpc
//
// It exits non-zero when the library misbehaves.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/lock"
	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const (
	burst  = 8                     // concurrent duplicates in part 1
	work   = 50 * time.Millisecond // how long a payment takes
	pay    = "/shop.Payments/Pay"
	report = "/shop.Payments/Report"
	limit  = 3 // reports per user per minute in part 4
)

func main() { demorun.Main("grpc demo", demo) }

func demo(ctx context.Context, env *demorun.Env) error {
	backend, err := env.BackendWith("grpclock-demo", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return err
	}
	s, err := start(backend)
	if err != nil {
		return err
	}
	defer s.stop()
	w := env.Out
	fmt.Fprintf(w, "Server: %s on %s (HTTP/2), locked on the user and the idempotency-key, replayed for an hour\n", pay, s.addr)
	if err := s.burstPart(ctx, w); err != nil {
		return err
	}
	if err := s.retryPart(ctx, w); err != nil {
		return err
	}
	if err := s.reusePart(ctx, w); err != nil {
		return err
	}
	return s.limitPart(ctx, w)
}

// server is the payment service and a client connection to it.
type server struct {
	backend lock.Backend
	limit   grpc.UnaryServerInterceptor // part 4's, set before it calls
	srv     *grpc.Server
	addr    string
	conn    *grpc.ClientConn
	runs    atomic.Int64 // payments made
	lose    atomic.Bool  // the lossy interceptor drops the next response
}

func start(backend lock.Backend) (*server, error) {
	idempotent, err := grpclock.UnaryServerInterceptor(backend,
		grpclock.FromIdempotencyKey(),
		grpclock.WithScope(userOf),       // the user authenticate put in ctx
		grpclock.WithReplay(time.Hour),   // responses replayed for an hour
		grpclock.WithWait(5*time.Second), // duplicates in flight wait, then get the replay
	)
	if err != nil {
		return nil, err
	}
	s := &server{backend: backend}
	s.srv = grpc.NewServer(grpc.ChainUnaryInterceptor(s.lossy, authenticate, route(pay, idempotent), route(report, s.limited)))
	s.srv.RegisterService(s.desc(), struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() { _ = s.srv.Serve(lis) }()
	s.addr = lis.Addr().String()
	s.conn, err = grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"methodConfig": [{"name": [{"service": "shop.Payments"}], "retryPolicy": {
			"maxAttempts": 3, "initialBackoff": "0.05s", "maxBackoff": "0.5s", "backoffMultiplier": 2,
			"retryableStatusCodes": ["UNAVAILABLE"]}}]}`))
	return s, err
}

// limited is the rate limit of part 4.
func (s *server) limited(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	return s.limit(ctx, req, info, h)
}

func (s *server) stop() {
	_ = s.conn.Close()
	s.srv.Stop()
}

// payHandler makes a payment under the lease and answers with its fence.
func (s *server) payHandler(ctx context.Context, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	l, _ := lock.LeaseFrom(ctx)
	s.runs.Add(1)
	time.Sleep(work) // charge the card, passing l.Fence to fenced writes
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-payment-fence", string(l.Fence)))
	return wrapperspb.String(fmt.Sprintf("paid %s, fence %s", req.GetValue(), l.Fence)), nil
}

// reply is one call's outcome as the client saw it.
type reply struct {
	msg      string
	replayed bool
	trailer  metadata.MD
	err      error
}

func (s *server) call(ctx context.Context, method, user, key, amount string) reply {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+user, "idempotency-key", key)
	var resp wrapperspb.StringValue
	var header, trailer metadata.MD
	err := s.conn.Invoke(ctx, method, wrapperspb.String(amount), &resp, grpc.Header(&header), grpc.Trailer(&trailer))
	return reply{msg: resp.GetValue(), replayed: len(header.Get(grpclock.MetadataReplayed)) > 0, trailer: trailer, err: err}
}

func (s *server) burstPart(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "\n== Part 1: %d concurrent duplicates (alice, idempotency-key pay-1) ==\n", burst)
	replies := make([]reply, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() { replies[i] = s.call(ctx, pay, "alice", "pay-1", "12.50") })
	}
	wg.Wait()
	replayed := 0
	for i, r := range replies {
		if r.err != nil || r.msg != replies[0].msg {
			return fmt.Errorf("burst: call %d: %q, %v; want %q (one run for all)", i, r.msg, r.err, replies[0].msg)
		}
		if r.replayed {
			replayed++
		}
	}
	fmt.Fprintf(w, "  every call: %q; %d replayed\n", replies[0].msg, replayed)
	if s.runs.Load() != 1 || replayed != burst-1 {
		return fmt.Errorf("burst: %d runs and %d replays, want 1 and %d", s.runs.Load(), replayed, burst-1)
	}
	return nil
}
