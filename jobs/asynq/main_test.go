package asynqlock_test

import (
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests. In a
// replica process of the scheduler fleet test it runs the replica instead.
//
// The global propagator is W3C's trace context and baggage, as a traced
// service sets it; the global TracerProvider stays unset (tests give
// theirs with WithTracerProvider).
//
// The parallel tests mostly wait on their redis-servers and asynq
// servers, so four run at a time unless -parallel says otherwise.
func TestMain(m *testing.M) {
	schedReplica()
	uniqueWorker()
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	redistest.DefaultParallel(4)
	redistest.Main(m)
}
