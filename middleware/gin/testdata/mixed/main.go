// Command mixed passes each adapter's option to the other adapter's
// constructor; it must not compile (see TestOptionsOfAnotherAdapter).
package main

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
	ginlock "github.com/syncguard-go/syncguard/middleware/gin"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

func main() {
	var b lock.Backend
	_, _ = httplock.New(b, httplock.FromIdempotencyKey(), ginlock.WithTTL(time.Minute))
	_, _ = ginlock.New(b, ginlock.FromIdempotencyKey(), httplock.WithTTL(time.Minute))
}
