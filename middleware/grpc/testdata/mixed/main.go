// Command mixed gives an HTTP adapter's options to grpclock and
// grpclock's to httplock; it must not compile (see
// TestOptionsOfAnotherAdapter).
package main

import (
	"github.com/syncguard-go/syncguard/lock"
	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

func main() {
	var b lock.Backend
	_, _ = grpclock.UnaryServerInterceptor(b, grpclock.FromIdempotencyKey(), httplock.WithProblemTypeBase("https://example.com/p/"))
	_, _ = httplock.New(b, httplock.FromIdempotencyKey(), grpclock.WithReplayCodes(nil))
}
