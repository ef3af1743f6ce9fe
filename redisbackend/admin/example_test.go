package admin_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

// ExampleCheck asks the server what its settings mean for fences
// and refuses to start on one that can hand out a fence twice after a
// restart or an eviction. It needs a Redis server, so it is compiled, not
// run, by go test.
func ExampleCheck() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	b, err := redisbackend.New(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	// README: admin-check
	report, err := admin.Check(ctx, b)
	if err != nil {
		log.Fatal(err) // Redis cannot be reached, or rejects the credentials
	}
	// END README
	for _, f := range report.Findings {
		fmt.Println(f) // e.g. "severe persistence: no persistence (appendonly no, save "") ..."
	}
	// README: admin-check
	if report.Worst() == admin.SeveritySevere {
		log.Fatal("this Redis cannot keep fences")
	}
	// END README
}
