package grpclock_test

import (
	"context"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The test service: a hand-written grpc.ServiceDesc over well-known
// types, so no generated code.
const (
	service      = "test.Orders"
	methodCreate = "/" + service + "/Create"
	methodWatch  = "/" + service + "/Watch"
)

// orders is the test service's behaviour: Create calls create, Watch
// calls watch; runs counts Create's runs.
type orders struct {
	runs   atomic.Int64
	create func(ctx context.Context, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
	watch  func(ss grpc.ServerStream) error
}

// defaultCreate sets header and trailer metadata (a binary one too) and
// answers "order <n>: <request>".
func (o *orders) defaultCreate(ctx context.Context, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	n := o.runs.Load()
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-order", "o-"+string(rune('0'+n%10))))
	_ = grpc.SetTrailer(ctx, metadata.Pairs("x-cost-bin", string([]byte{0, 1, 2, byte(n)}), "x-note", "done"))
	return wrapperspb.String("order " + string(rune('0'+n%10)) + ": " + req.GetValue()), nil
}

func (o *orders) desc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: service,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Create",
			Handler: func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
				req := new(wrapperspb.StringValue)
				if err := dec(req); err != nil {
					return nil, err
				}
				h := func(ctx context.Context, r any) (any, error) {
					o.runs.Add(1)
					if o.create != nil {
						return o.create(ctx, r.(*wrapperspb.StringValue))
					}
					return o.defaultCreate(ctx, r.(*wrapperspb.StringValue))
				}
				if ic == nil {
					return h(ctx, req)
				}
				return ic(ctx, req, &grpc.UnaryServerInfo{FullMethod: methodCreate}, h)
			}}},
		Streams: []grpc.StreamDesc{{StreamName: "Watch", ServerStreams: true, ClientStreams: true,
			Handler: func(_ any, ss grpc.ServerStream) error { return o.watch(ss) }}},
	}
}

// serve starts a server with opts serving o, over bufconn or, with tcp,
// a loopback TCP listener (HTTP/2 over a real socket), and returns a
// client connection with dial options extra; both end with the test.
func serve(t testing.TB, o *orders, tcp bool, opts []grpc.ServerOption, extra ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, stop, err := listen(o, tcp, opts, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return conn
}

// listen is serve without a test: stop ends the connection and the server.
func listen(o *orders, tcp bool, opts []grpc.ServerOption, extra ...grpc.DialOption) (conn *grpc.ClientConn, stop func(), err error) {
	srv := grpc.NewServer(opts...)
	srv.RegisterService(o.desc(), struct{}{})
	var lis net.Listener
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	target := "passthrough:///bufnet"
	if tcp {
		if lis, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, nil, err
		}
		target = lis.Addr().String()
	} else {
		bl := bufconn.Listen(1 << 20)
		lis = bl
		dial = append(dial, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return bl.DialContext(ctx) }))
	}
	go func() { _ = srv.Serve(lis) }()
	if conn, err = grpc.NewClient(target, append(dial, extra...)...); err != nil {
		srv.Stop()
		return nil, nil, err
	}
	return conn, func() {
		_ = conn.Close()
		srv.Stop()
	}, nil
}

// env is a test's backend on the shared Redis under a prefix of its own,
// with a count of the commands it sent.
type env struct {
	b    *redisbackend.Backend
	rdb  *redis.Client
	cmds *redistest.Counter
}

func newEnv(t testing.TB) *env {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	e := &env{rdb: rdb, cmds: redistest.Count(rdb)}
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t), FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		t.Fatal(err)
	}
	e.b = b
	return e
}

// result is one unary call's outcome as the client saw it: the response
// message's bytes as they came over the wire, the metadata, the error.
type result struct {
	body            []byte
	header, trailer metadata.MD
	err             error
}

// call calls Create with value and metadata pairs kv.
func call(ctx context.Context, conn *grpc.ClientConn, value string, kv ...string) result {
	var r result
	ctx = metadata.AppendToOutgoingContext(ctx, kv...)
	r.err = conn.Invoke(ctx, methodCreate, wrapperspb.String(value), &r.body,
		grpc.Header(&r.header), grpc.Trailer(&r.trailer), grpc.ForceCodec(rawCodec{}))
	return r
}

// rawCodec sends protobuf messages and receives the raw bytes, so that
// tests compare responses byte for byte.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }
func (rawCodec) Unmarshal(b []byte, v any) error {
	*v.(*[]byte) = slices.Clone(b)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// testCtx is a context for one test's calls.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// user is a scope function reading the principal an auth interceptor in
// front would set; here the "x-user-bin" metadata (UTF-8 bytes).
func user(ctx context.Context) (string, error) {
	if vs := metadata.ValueFromIncomingContext(ctx, "x-user-bin"); len(vs) == 1 {
		return vs[0], nil
	}
	return "", nil
}
