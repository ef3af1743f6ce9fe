package otellock_test

import (
	"context"
	"log"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The README's OpenTelemetry snippet, kept compiling (it needs a live Redis,
// so nothing calls it); testkit/readme checks that README.md quotes the
// marked regions, joined, verbatim.

// README: otel
import otellock "github.com/syncguard-go/syncguard/otel"

// END README

// readmeOtel is compiled, not run; this use keeps staticcheck (U1000) from
// calling it dead code.
var _ = []any{readmeOtel, docOtel, docOtelHook}

func readmeOtel(ctx context.Context, opts *redis.Options, work func(context.Context, lock.Lease) error) error {
	// README: otel
	rdb := redis.NewClient(opts)
	_ = redisotel.InstrumentTracing(rdb, redisotel.WithDBStatement(false)) // optional: Redis command spans
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	locks := otellock.Wrap(b) // global providers, or otellock.WithTracerProvider / WithMeterProvider

	err = lock.Do(ctx, locks, "invoice:42", work)
	// END README
	return err
}

// The package comment's snippet (doc.go), kept compiling the same way.
func docOtel(ctx context.Context, rdb *redis.Client, work func(context.Context, lock.Lease) error) error {
	// README: otel-doc
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		return err
	}
	locks := otellock.Wrap(b) // global providers; or WithTracerProvider, WithMeterProvider
	err = lock.Do(ctx, locks, "invoice:42", work)
	// END README
	return err
}

// docs/opentelemetry.md's snippet of NewHook, kept compiling the same way.
func docOtelHook(b lock.Backend, auditHook lock.Hook) lock.Backend {
	// README: otel-hook
	locks := lock.WithHooks(b,
		otellock.NewHook(b.Capabilities().Backend), // same options as Wrap
		auditHook, // a lock.Hook of your own, inside the spans
	)
	// END README
	return locks
}
