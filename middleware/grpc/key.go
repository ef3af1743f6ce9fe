package grpclock

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/syncguard-go/syncguard/middleware/guard"
)

// MetadataIdempotencyKey is the metadata key FromIdempotencyKey reads.
const MetadataIdempotencyKey = "idempotency-key"

// FromMetadata reads the first value of the incoming metadata key name.
func FromMetadata(name string) KeyFunc {
	return func(ctx context.Context, _ any) (string, error) {
		if vs := metadata.ValueFromIncomingContext(ctx, name); len(vs) > 0 && vs[0] != "" {
			return vs[0], nil
		}
		return "", guard.Missing("metadata", name)
	}
}

// FromIdempotencyKey reads the idempotency-key metadata as
// guard.IdempotencyKey reads the Idempotency-Key header.
func FromIdempotencyKey() KeyFunc { return FromIdempotencyMetadata(MetadataIdempotencyKey) }

// FromIdempotencyMetadata reads the metadata key name as
// FromIdempotencyKey reads idempotency-key.
func FromIdempotencyMetadata(name string) KeyFunc {
	header := http.CanonicalHeaderKey(name)
	return func(ctx context.Context, _ any) (string, error) {
		return guard.IdempotencyKey(http.Header{header: metadata.ValueFromIncomingContext(ctx, name)}, name)
	}
}

// FromMethod returns the call's full method name, such as
// "/shop.Orders/Create": one key per method.
func FromMethod() KeyFunc {
	return func(ctx context.Context, _ any) (string, error) {
		if m, ok := grpc.Method(ctx); ok && m != "" {
			return m, nil
		}
		return "", guard.Missing("call", "method")
	}
}

// Compose joins the results of fns into one key, as guard.Compose
// does.
func Compose(fns ...KeyFunc) KeyFunc {
	parts := make([]func(call) (string, error), len(fns))
	for i, f := range fns {
		if f != nil {
			parts[i] = func(c call) (string, error) { return f(c.ctx, c.req) }
		}
	}
	joined := guard.Compose(parts...)
	return func(ctx context.Context, req any) (string, error) { return joined(call{ctx, req}) }
}

// call is a key function's arguments, for guard.Compose.
type call struct {
	ctx context.Context
	req any
}
