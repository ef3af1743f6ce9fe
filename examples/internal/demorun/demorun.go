// Package demorun is the part every example program shares. An example's
// main is one call:
//
//	func main() { demorun.Main("quickstart", demo) }
//
// and its tests call Run with an empty url, for an embedded Redis.
package demorun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/examples/internal/demoredis"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Func is a demo; it returns an error when the library misbehaved.
type Func func(ctx context.Context, env *Env) error

// Env is what a demo runs on.
type Env struct {
	// Out receives the demo's story.
	Out io.Writer
	// Redis is the client of the demo's server.
	Redis *redis.Client
	// Mini is the embedded server, or nil.
	Mini *miniredis.Miniredis

	wrap func(lock.Backend) lock.Backend // see RunBroken
}

// Backend returns a redisbackend on e.Redis under this run's own prefix.
func (e *Env) Backend(name string) (lock.Backend, error) {
	return e.BackendWith(name, redisbackend.Options{})
}

// BackendWith is Backend with the options o, but the run's own prefix.
func (e *Env) BackendWith(name string, o redisbackend.Options) (lock.Backend, error) {
	o.Prefix = demoredis.Prefix(name)
	b, err := redisbackend.New(e.Redis, &o)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Out, "Keys:  %s:*\n", o.Prefix)
	if o.FenceStripes > 0 {
		fmt.Fprintf(e.Out, "Fences: %d striped counters, whatever the number of keys\n", o.FenceStripes)
	}
	if e.wrap != nil {
		return e.wrap(b), nil
	}
	return b, nil
}

// Expire returns once a lease of ttl granted now has expired, moving the
// embedded server's clock or waiting.
func (e *Env) Expire(ctx context.Context, ttl time.Duration) {
	if e.Mini != nil {
		e.Mini.FastForward(ttl + 2*time.Second)
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(ttl + lockdriver.TimeTolerance + 200*time.Millisecond):
	}
}

// Main runs demo on REDIS_URL or an embedded Redis. It exits 1 when the
// demo fails, and 130 on SIGINT or SIGTERM.
func Main(name string, demo Func) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	err := Run(ctx, os.Stdout, os.Getenv("REDIS_URL"), demo)
	took := time.Since(start).Round(10 * time.Millisecond)
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case err != nil && interrupted:
		fmt.Fprintf(os.Stderr, "%s: interrupted after %v: %v\n", name, took, err)
		os.Exit(130)
	case err != nil:
		fmt.Fprintf(os.Stderr, "%s FAILED after %v: %v\n", name, took, err)
		os.Exit(1)
	}
	fmt.Printf("(%s took %v)\n", name, took)
}

// Run connects to the Redis server at url, or starts an embedded miniredis
// when url is empty, and runs demo with its story going to w.
func Run(ctx context.Context, w io.Writer, url string, demo Func) error {
	return run(ctx, &Env{Out: w}, url, demo)
}

// RunBroken is Run on an embedded Redis with every backend wrapped by wrap.
// Tests use it to check that a demo fails when the lock is broken.
func RunBroken(ctx context.Context, w io.Writer, wrap func(lock.Backend) lock.Backend, demo Func) error {
	return run(ctx, &Env{Out: w, wrap: wrap}, "", demo)
}

func run(ctx context.Context, env *Env, url string, demo Func) error {
	rdb, mr, closeFn, err := demoredis.Connect(ctx, env.Out, url)
	if err != nil {
		return err
	}
	defer closeFn()
	env.Redis, env.Mini = rdb, mr
	return demo(ctx, env)
}
