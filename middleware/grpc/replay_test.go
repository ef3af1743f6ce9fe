package grpclock_test

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/syncguard-go/syncguard/internal/wire"
	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// replayServer serves o behind a replay interceptor on e with opts, and
// returns the client connection.
func replayServer(t *testing.T, e *env, o *orders, tcp bool, opts ...grpclock.Option) *grpc.ClientConn {
	t.Helper()
	ic, err := grpclock.UnaryServerInterceptor(e.b, grpclock.FromIdempotencyKey(), append([]grpclock.Option{
		grpclock.WithScope(user),
		grpclock.WithReplay(time.Minute), grpclock.WithWait(5 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, o, tcp, []grpc.ServerOption{grpc.UnaryInterceptor(ic)})
}

// TestReplayConcurrentDuplicates: duplicates sent at once, over bufconn
// and over TCP, run the handler once and all get the same bytes and
// metadata; the record is one syncguard show decodes.
func TestReplayConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	for _, tcp := range []bool{false, true} {
		t.Run("tcp="+strconv.FormatBool(tcp), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			o := &orders{}
			release := make(chan struct{})
			o.create = func(ctx context.Context, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				<-release // hold the key until every duplicate is in flight
				return o.defaultCreate(ctx, req)
			}
			conn := replayServer(t, e, o, tcp)
			ctx := testCtx(t)
			const n = 6
			results := make([]result, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { results[i] = call(ctx, conn, "pencils", "idempotency-key", "k1", "x-user-bin", "ann") })
			}
			waitLocked(t, e)
			close(release)
			wg.Wait()
			if got := o.runs.Load(); got != 1 {
				t.Fatalf("handler runs = %d, want 1", got)
			}
			first := -1
			for i, r := range results {
				if r.err != nil {
					t.Fatalf("call %d: %v", i, r.err)
				}
				if len(r.header.Get(grpclock.MetadataReplayed)) == 0 {
					first = i
				}
			}
			if first < 0 {
				t.Fatal("every call is marked replayed; want the first unmarked")
			}
			for i, r := range results {
				r.header.Delete(grpclock.MetadataReplayed)
				if !bytes.Equal(r.body, results[first].body) || !mdEqual(r.header, results[first].header) || !mdEqual(r.trailer, results[first].trailer) {
					t.Errorf("call %d got %q %v %v, want the first run's %q %v %v", i, r.body, r.header, r.trailer,
						results[first].body, results[first].header, results[first].trailer)
				}
			}
			if got := results[first].trailer.Get("x-cost-bin"); len(got) != 1 || got[0] != "\x00\x01\x02\x01" {
				t.Errorf("x-cost-bin = %q, want the handler's bytes", got)
			}
			checkStoredRecord(t, e)
		})
	}
}

// waitLocked waits until a key of e is locked: the first call holds it.
func waitLocked(t *testing.T, e *env) {
	t.Helper()
	ctx := testCtx(t)
	for {
		keys, err := e.rdb.Keys(ctx, e.b.Prefix()+":*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if locked, _ := e.b.IsLocked(ctx, k[len(e.b.Prefix())+1:]); locked {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("no key was locked")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// checkStoredRecord: the one record under e's prefix decodes as a
// record (what syncguard show prints) holding a gRPC response.
func checkStoredRecord(t *testing.T, e *env) {
	t.Helper()
	ctx := testCtx(t)
	keys, err := e.rdb.Keys(ctx, e.b.Prefix()+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		v, err := e.rdb.Get(ctx, k).Bytes()
		if err != nil || !bytes.HasPrefix(v, []byte(wire.RecordMagic)) {
			continue
		}
		r, err := wire.DecodeRecord(v)
		if err != nil {
			t.Fatalf("the stored record does not decode: %v", err)
		}
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/grpc" || r.Header.Get("Grpc-Message-Type") != "google.protobuf.StringValue" ||
			r.Header.Get("X-Order") == "" || r.Trailer.Get("Grpc-Status") != "0" || r.Trailer.Get("X-Note") != "done" {
			t.Errorf("record = %+v, want a gRPC response with its metadata", r)
		}
		return
	}
	t.Fatalf("no record among %q", keys)
}

func mdEqual(a, b metadata.MD) bool {
	if len(a) != len(b) {
		return false
	}
	for k, vs := range a {
		ws := b[k]
		if len(vs) != len(ws) {
			return false
		}
		for i := range vs {
			if vs[i] != ws[i] {
				return false
			}
		}
	}
	return true
}

// TestReplayRetryPolicy: the first attempt's response is lost after the
// handler ran (an interceptor in front answers UNAVAILABLE instead);
// grpc-go's retry policy sends the call again, and it is replayed.
func TestReplayRetryPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	ic, err := grpclock.UnaryServerInterceptor(e.b,
		grpclock.FromIdempotencyKey(),
		grpclock.WithScope(user), grpclock.WithReplay(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var attempts, dropped atomicCount
	conn := serve(t, o, true, []grpc.ServerOption{grpc.ChainUnaryInterceptor(dropFirst(&attempts, &dropped), ic)},
		grpc.WithDefaultServiceConfig(`{"methodConfig": [{"name": [{"service": "test.Orders"}], "retryPolicy": {
			"maxAttempts": 3, "initialBackoff": "0.01s", "maxBackoff": "0.05s", "backoffMultiplier": 2,
			"retryableStatusCodes": ["UNAVAILABLE"]}}]}`))
	r := call(testCtx(t), conn, "pencils", "idempotency-key", "k1", "x-user-bin", "ann")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if o.runs.Load() != 1 || attempts.get() != 2 || dropped.get() != 1 {
		t.Errorf("runs %d, attempts %d, dropped %d; want 1 run, 2 attempts, 1 dropped", o.runs.Load(), attempts.get(), dropped.get())
	}
	if len(r.header.Get(grpclock.MetadataReplayed)) == 0 || r.header.Get("x-order")[0] != "o-1" {
		t.Errorf("header = %v, want the first run's, marked replayed", r.header)
	}
}

type atomicCount struct {
	mu sync.Mutex
	n  int
}

func (c *atomicCount) add() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

func (c *atomicCount) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// dropFirst answers the first call UNAVAILABLE after running it, and
// sends none of its metadata: a response lost on its way back.
func dropFirst(attempts, dropped *atomicCount) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if attempts.add() > 1 {
			return h(ctx, req)
		}
		sts := grpc.ServerTransportStreamFromContext(ctx)
		_, _ = h(grpc.NewContextWithServerTransportStream(ctx, swallow{sts}), req)
		dropped.add()
		return nil, status.Error(codes.Unavailable, "response lost")
	}
}

// swallow is a transport stream that sends no metadata.
type swallow struct{ grpc.ServerTransportStream }

func (swallow) SetHeader(metadata.MD) error  { return nil }
func (swallow) SendHeader(metadata.MD) error { return nil }
func (swallow) SetTrailer(metadata.MD) error { return nil }

// TestReplayKeyReused: the key sent again with another request is
// refused FAILED_PRECONDITION, and the handler does not run.
func TestReplayKeyReused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	conn := replayServer(t, e, o, false)
	ctx := testCtx(t)
	if r := call(ctx, conn, "pencils", "idempotency-key", "k1", "x-user-bin", "ann"); r.err != nil {
		t.Fatal(r.err)
	}
	r := call(ctx, conn, "erasers", "idempotency-key", "k1", "x-user-bin", "ann")
	st := status.Convert(r.err)
	if st.Code() != codes.FailedPrecondition || reason(st) != "IDEMPOTENCY_KEY_REUSED" || o.runs.Load() != 1 {
		t.Errorf("reuse: %v (reason %q), runs %d; want FailedPrecondition, IDEMPOTENCY_KEY_REUSED, 1 run", r.err, reason(st), o.runs.Load())
	}
}

func reason(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == grpclock.ErrorDomain {
			return info.Reason
		}
	}
	return ""
}

// TestReplayStatuses: a stored error status comes back whole (code,
// message, details); a status replay does not store runs again, marked.
func TestReplayStatuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	bad, _ := status.New(codes.InvalidArgument, "no such product: é").WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "value", Description: "unknown"}}})
	o.create = func(ctx context.Context, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		if req.GetValue() == "busy" {
			return nil, status.Error(codes.Unavailable, "try later")
		}
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-note", "checked"))
		return nil, bad.Err()
	}
	conn := replayServer(t, e, o, false)
	ctx := testCtx(t)
	for i := range 2 {
		r := call(ctx, conn, "ink", "idempotency-key", "k1", "x-user-bin", "ann")
		if got := status.Convert(r.err); !proto.Equal(got.Proto(), bad.Proto()) || r.trailer.Get("x-note")[0] != "checked" {
			t.Errorf("call %d: %v %v, want %v with its trailer", i, got.Proto(), r.trailer, bad.Proto())
		}
	}
	for i := range 2 {
		r := call(ctx, conn, "busy", "idempotency-key", "k2", "x-user-bin", "ann")
		if status.Code(r.err) != codes.Unavailable || r.trailer.Get(grpclock.MetadataNotStored)[0] != guard.NotStoredStatus {
			t.Errorf("call %d: %v, trailer %v; want Unavailable marked %s", i, r.err, r.trailer, guard.NotStoredStatus)
		}
	}
	if got := o.runs.Load(); got != 3 {
		t.Errorf("runs = %d, want 3 (1 stored, 2 not stored)", got)
	}
}

// TestScopesNFCApart: principals that NFC would merge ("é" composed and
// decomposed) have keys of their own: each runs, neither is replayed.
func TestScopesNFCApart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	conn := replayServer(t, e, o, false)
	ctx := testCtx(t)
	for _, u := range []string{"\u00e9", "e\u0301"} {
		r := call(ctx, conn, "pencils", "idempotency-key", "k1", "x-user-bin", u)
		if r.err != nil || len(r.header.Get(grpclock.MetadataReplayed)) != 0 {
			t.Errorf("user %q: %v, header %v; want a run of its own", u, r.err, r.header)
		}
	}
	if got := o.runs.Load(); got != 2 {
		t.Errorf("runs = %d, want 2", got)
	}
	r := call(ctx, conn, "pencils", "idempotency-key", "k1")
	if st := status.Convert(r.err); st.Code() != codes.Unauthenticated || reason(st) != "NO_SCOPE" {
		t.Errorf("no principal: %v, want Unauthenticated NO_SCOPE", r.err)
	}
}

// TestReplayStatusNotUTF8: a stored code whose message is not valid UTF-8
// is stored all the same, and a duplicate gets what the first call got
// from grpc-go: the message with each invalid byte as U+FFFD, and no
// details (grpc-go cannot marshal such a status, so it sends none).
func TestReplayStatusNotUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	withDetails, _ := status.New(codes.NotFound, "no order \xff\xfe here").WithDetails(&errdetails.ResourceInfo{ResourceName: "o-1"})
	o.create = func(ctx context.Context, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		if req.GetValue() == "details" {
			return nil, withDetails.Err()
		}
		return nil, status.Error(codes.NotFound, "no order \xff\xfe here")
	}
	conn := replayServer(t, e, o, false)
	ctx := testCtx(t)
	want := status.New(codes.NotFound, "no order \uFFFD\uFFFD here").Proto()
	for _, value := range []string{"plain", "details"} {
		for i := range 2 {
			r := call(ctx, conn, value, "idempotency-key", "k-"+value, "x-user-bin", "ann")
			if got := status.Convert(r.err).Proto(); !proto.Equal(got, want) {
				t.Errorf("%s, call %d: %v, want %v", value, i, got, want)
			}
			if ns := r.trailer.Get(grpclock.MetadataNotStored); len(ns) != 0 {
				t.Errorf("%s, call %d: trailer %s: %v, want the status stored", value, i, grpclock.MetadataNotStored, ns)
			}
			if replayed := len(r.header.Get(grpclock.MetadataReplayed)) > 0; replayed != (i == 1) {
				t.Errorf("%s, call %d: header %v, want %s only on the duplicate", value, i, r.header, grpclock.MetadataReplayed)
			}
		}
	}
	if got := o.runs.Load(); got != 2 {
		t.Errorf("runs = %d, want 2 (each key's first call only)", got)
	}
}
