package demoredis

import (
	"context"
	"fmt"
	"io"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

// PrintCheck runs redisbackend's Check on rdb and prints its findings to
// w: what the server's persistence, eviction, replication, version and
// cluster settings mean for fences. A server that reports none of them
// (the embedded miniredis has neither CONFIG nor INFO) gets one line, and
// so does an error: the check informs the demo, it never stops it.
func PrintCheck(ctx context.Context, w io.Writer, rdb *redis.Client) {
	// A backend for Check only: no configuration record (Check writes nothing).
	b, err := redisbackend.New(rdb, &redisbackend.Options{DisableConfigRecord: true})
	if err != nil {
		fmt.Fprintf(w, "Check: %v\n", err)
		return
	}
	report, err := admin.Check(ctx, b)
	if err != nil {
		fmt.Fprintf(w, "Check: %v\n", err)
		return
	}
	known := 0
	for _, f := range report.Findings {
		if f.Severity != admin.SeverityUnknown {
			known++
		}
	}
	if known == 0 {
		fmt.Fprintln(w, "Check: this server does not report its settings (no CONFIG GET or INFO); run on a real Redis (REDIS_URL) to see what it does for fences")
		return
	}
	fmt.Fprintf(w, "Check: what this Redis does for fences (worst: %s)\n", report.Worst())
	for _, f := range report.Findings {
		fmt.Fprintf(w, "  %s\n", f)
	}
}
