// Package otellock instruments a lock.Backend with OpenTelemetry traces and
// metrics. [Wrap] returns any backend with the package's hook; use the
// result wherever the backend was used (lock.Do, lock.Acquire, lock.Hold,
// the HTTP and job middleware):
//
//	b, err := redisbackend.New(rdb, nil)
//	if err != nil {
//		return err
//	}
//	locks := otellock.Wrap(b) // global providers; or WithTracerProvider, WithMeterProvider
//	err = lock.Do(ctx, locks, "invoice:42", work)
//
// Wrap is lock.WithHooks(b, NewHook(...)): the package observes through
// one lock.Hook and mirrors no interface, so the result has exactly the
// backend's extensions (lock.IDBackend, lock.Recorder). [NewHook] returns
// that hook, to install with lock.WithHooks beside hooks of your own.
//
// Each backend operation is a span of kind INTERNAL, a child of the span
// in the call's context ("syncguard.acquire", "syncguard.release", ...); a
// "syncguard.wait" span covers a whole lock.Acquire, lock.Do or lock.Hold
// with an "attempt" event per attempt that did not get the lock; a lost
// lease is a "syncguard.lease_lost" event on the span of the context it
// was kept under; a term of lock/election's Lead is a "syncguard.term"
// span, with the hash of the leader's identity, never the identity. Keys appear as lockdriver.HashKey hashes unless
// [WithRawKeys] says otherwise; lock ids never. [WithFilter] skips the spans of the
// operations it rejects (they still count in the metrics). The metrics are
// the durations of the operations, the waits and the holds, contention,
// lost leases, hand-offs and terms (OperationDurationMetric and the
// others). docs/opentelemetry.md has every span, attribute and metric,
// a Grafana dashboard, and what the instrumentation costs.
package otellock
