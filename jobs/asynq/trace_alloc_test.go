package asynqlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
)

// memBackend grants every Acquire at once and forgets it: a backend whose
// calls allocate the same every time, for counting the Guard's own
// allocations.
type memBackend struct{}

func (memBackend) Acquire(_ context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	return lock.Lease{Key: key, ID: "id", Fence: "000000000000001", TTL: ttl, ExpiresAt: time.Now().Add(ttl)}, nil
}
func (memBackend) Release(context.Context, string) error { return nil }
func (memBackend) Extend(_ context.Context, _ string, ttl time.Duration) (time.Time, error) {
	return time.Now().Add(ttl), nil
}
func (memBackend) IsLocked(context.Context, string) (bool, error)        { return false, nil }
func (memBackend) LookupKey(context.Context, string) (*lock.Info, error) { return nil, nil }
func (memBackend) LookupID(context.Context, string) (*lock.Info, error)  { return nil, nil }
func (memBackend) Capabilities() lock.Capabilities                       { return lock.Capabilities{Backend: "mem"} }

// TestUntracedDeliveryAllocatesNothingMore: with no TracerProvider set
// (the global no-op), or OpenTelemetry's no-op provider given, a delivery
// allocates exactly what it allocates without the delivery span's code,
// even for a task whose headers carry a trace context.
func TestUntracedDeliveryAllocatesNothingMore(t *testing.T) {
	h := asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })
	task := asynq.NewTaskWithHeaders("report:build", []byte("7"), map[string]string{
		"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	})
	ctx := context.Background()
	for _, tt := range []struct {
		desc string
		opts []asynqlock.Option
	}{
		{"global provider unset", nil},
		{"no-op provider", []asynqlock.Option{asynqlock.WithTracerProvider(tracenoop.NewTracerProvider())}},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			g, err := asynqlock.New(memBackend{}, append([]asynqlock.Option{asynqlock.WithTTL(time.Hour)}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			count := func(w asynq.Handler) float64 {
				return testing.AllocsPerRun(200, func() {
					if err := w.ProcessTask(ctx, task); err != nil {
						t.Fatal(err)
					}
				})
			}
			plain, traced := count(g.WrapUntraced(h)), count(g.Wrap(h))
			if traced > plain {
				t.Errorf("allocations per delivery: %v with the span's code, %v without; want no more", traced, plain)
			}
		})
	}
}
