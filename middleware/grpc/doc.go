// Package grpclock runs gRPC calls under syncguard locks, with httpguard's
// options, errors and answers: UnaryServerInterceptor and
// StreamServerInterceptor lock a key per call (lock.LeaseFrom(ctx) in the
// handler), limit calls per key (httpguard.WithLimit), and replay a
// unary call's response, metadata and status to its duplicates
// (httpguard.WithReplay, keys from FromIdempotencyKey). NewLimiter is a
// Limiter for go-grpc-middleware's ratelimit interceptors. Refusals are
// canonical status codes with google.rpc details. docs/grpc.md has the
// codes, the record and the guarantees.
package grpclock
