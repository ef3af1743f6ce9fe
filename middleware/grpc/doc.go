// Package grpclock runs gRPC calls under syncguard locks:
// UnaryServerInterceptor and StreamServerInterceptor (and their Must
// forms, for inline use in grpc.ChainUnaryInterceptor) lock a key per
// call (lock.LeaseFrom(ctx) in the handler), limit calls per key
// (WithLimit), and replay a unary call's response, metadata and status
// to its duplicates (WithReplay, keys from FromIdempotencyKey).
// NewLimiter is a Limiter for go-grpc-middleware's ratelimit
// interceptors. Refusals are canonical status codes with google.rpc
// details. The options are this package's; the errors and defaults are
// guard's, shared with the HTTP adapters. docs/grpc.md has the codes,
// the record and the guarantees.
package grpclock
