package main

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// desc is the service, written by hand over well-known types: a real
// one comes from protoc.
func (s *server) desc() *grpc.ServiceDesc {
	unary := func(name string, h grpc.UnaryHandler) grpc.MethodDesc {
		return grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			req := new(wrapperspb.StringValue)
			if err := dec(req); err != nil {
				return nil, err
			}
			return ic(ctx, req, &grpc.UnaryServerInfo{FullMethod: "/shop.Payments/" + name}, h)
		}}
	}
	return &grpc.ServiceDesc{ServiceName: "shop.Payments", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{
		unary("Pay", func(ctx context.Context, req any) (any, error) {
			return s.payHandler(ctx, req.(*wrapperspb.StringValue))
		}),
		unary("Report", func(context.Context, any) (any, error) { return &emptypb.Empty{}, nil }),
	}}
}

type userKey struct{}

// authenticate stands for an authentication interceptor: it accepts
// "authorization: Bearer <user>" (a real one verifies a token) and puts
// the user in ctx.
func authenticate(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	vs := metadata.ValueFromIncomingContext(ctx, "authorization")
	if len(vs) != 1 || !strings.HasPrefix(vs[0], "Bearer ") {
		return nil, status.Error(codes.Unauthenticated, "no bearer token")
	}
	return h(context.WithValue(ctx, userKey{}, strings.TrimPrefix(vs[0], "Bearer ")), req)
}

// userOf returns the user authenticate established.
func userOf(ctx context.Context) (string, error) {
	if u, ok := ctx.Value(userKey{}).(string); ok {
		return u, nil
	}
	return "", errors.New("not authenticated")
}

// route applies ic to the calls of method only (go-grpc-middleware's
// selector does this in a real service).
func route(method string, ic grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod != method {
			return h(ctx, req)
		}
		return ic(ctx, req, info, h)
	}
}

// lossy runs a call and, when s.lose is set, loses its response, as a
// network might after the handler ran: the client sees UNAVAILABLE.
func (s *server) lossy(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if !s.lose.CompareAndSwap(true, false) {
		return h(ctx, req)
	}
	_, _ = h(grpc.NewContextWithServerTransportStream(ctx, mute{grpc.ServerTransportStreamFromContext(ctx)}), req)
	return nil, status.Error(codes.Unavailable, "response lost")
}

// mute sends no metadata: the lost response's.
type mute struct{ grpc.ServerTransportStream }

func (mute) SetHeader(metadata.MD) error  { return nil }
func (mute) SendHeader(metadata.MD) error { return nil }
func (mute) SetTrailer(metadata.MD) error { return nil }
