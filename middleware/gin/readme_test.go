package ginlock_test

import (
	"log"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/lock"
	ginlock "github.com/syncguard-go/syncguard/middleware/gin"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// The package comment's snippet (doc.go), kept compiling;
// testkit/readme checks that doc.go quotes it verbatim.
func docGin(backend lock.Backend, r *gin.Engine, createOrder gin.HandlerFunc) {
	// README: ginlock-doc
	mw, err := ginlock.New(backend, ginlock.FromParam("id"))
	if err != nil {
		log.Fatal(err)
	}
	r.POST("/orders/:id", mw, createOrder)
	// END README
}

// docs/http.md's gin snippet.
func readmeGin(backend lock.Backend, r *gin.Engine, userID ginlock.ScopeFunc, createOrder gin.HandlerFunc) {
	// README: gin
	mw, err := ginlock.New(backend,
		ginlock.FromIdempotencyKey(),
		ginlock.WithScope(userID), // the user your authentication middleware established
		ginlock.WithReplay(guard.DefaultReplayTTL))
	if err != nil {
		log.Fatal(err)
	}
	r.POST("/orders", mw, createOrder) // in createOrder: l, _ := ginlock.LeaseFrom(c)
	// END README
}
