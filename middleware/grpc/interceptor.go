package grpclock

import (
	"context"

	"google.golang.org/grpc"

	"github.com/syncguard-go/syncguard/lock"
)

// UnaryServerInterceptor returns an interceptor that runs each call under
// the lock on its key, read by key, in b (lock.LeaseFrom(ctx) in the
// handler). With WithReplay a duplicate call gets the first one's
// response, metadata and status without running the handler. A nil
// backend, a nil key or a bad option is an InvalidArgument *lock.Error
// naming it, and nothing reaches b. docs/grpc.md has the answers.
func UnaryServerInterceptor(b lock.Backend, key KeyFunc, opts ...Option) (grpc.UnaryServerInterceptor, error) {
	c, err := newConfig(b, key, opts, forUnary)
	if err != nil {
		return nil, err
	}
	return c.unary, nil
}

// MustUnaryServerInterceptor is like UnaryServerInterceptor but panics on
// a bad configuration, for use inline in grpc.ChainUnaryInterceptor.
func MustUnaryServerInterceptor(b lock.Backend, key KeyFunc, opts ...Option) grpc.UnaryServerInterceptor {
	return must(UnaryServerInterceptor(b, key, opts...))
}

// StreamServerInterceptor returns an interceptor that holds the lock on
// each stream's key in b for the stream's life: it is released when the
// handler returns, also when the client cancels. The key function gets
// no request message. Options as UnaryServerInterceptor, but no replay.
func StreamServerInterceptor(b lock.Backend, key KeyFunc, opts ...Option) (grpc.StreamServerInterceptor, error) {
	c, err := newConfig(b, key, opts, forStream)
	if err != nil {
		return nil, err
	}
	return c.stream, nil
}

// MustStreamServerInterceptor is like StreamServerInterceptor but panics
// on a bad configuration, for use inline in grpc.ChainStreamInterceptor.
func MustStreamServerInterceptor(b lock.Backend, key KeyFunc, opts ...Option) grpc.StreamServerInterceptor {
	return must(StreamServerInterceptor(b, key, opts...))
}

// must returns v, or panics with err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func (c *config) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	key, err := c.callKey(ctx, info.FullMethod, req)
	if err != nil {
		return nil, c.refuse(ctx, info.FullMethod, err)
	}
	if c.g.Replays() {
		return c.replay(ctx, key, req, info.FullMethod, handler)
	}
	var resp any
	ran, err := c.g.Run(ctx, key, func(held context.Context) error {
		defer c.g.Timed(info.FullMethod)()
		var herr error
		resp, herr = handler(held, req)
		return herr
	})
	if !ran {
		return nil, c.refuse(ctx, info.FullMethod, err)
	}
	return resp, err
}

func (c *config) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	key, err := c.callKey(ctx, info.FullMethod, nil)
	if err != nil {
		return c.refuse(ctx, info.FullMethod, err)
	}
	ran, err := c.g.Run(ctx, key, func(held context.Context) error {
		defer c.g.Timed(info.FullMethod)()
		return handler(srv, heldStream{ss, held})
	})
	if !ran {
		return c.refuse(ctx, info.FullMethod, err)
	}
	return err
}

// heldStream is a stream whose context is the held one.
type heldStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s heldStream) Context() context.Context { return s.ctx }
