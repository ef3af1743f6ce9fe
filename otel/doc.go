// Package otellock records what a lock.Backend does as OpenTelemetry
// traces and metrics. Wrap the backend, then use the result wherever the
// backend was used:
//
//	b, err := redisbackend.New(rdb, nil)
//	if err != nil {
//		return err
//	}
//	locks := otellock.Wrap(b) // global providers; or WithTracerProvider, WithMeterProvider
//	err = lock.Do(ctx, locks, "invoice:42", work)
//
// Each backend call is a span, such as "syncguard.acquire". A wait of
// lock.Do is a "syncguard.wait" span, a lost lease a "syncguard.lease_lost"
// event, and an election's term a "syncguard.term" span. The metrics time
// the calls, waits and holds, and count contention, lost leases and
// hand-offs.
//
// Spans carry keys only as hashes, unless WithRawKeys says otherwise, and
// never a lock id. The wrapped backend keeps exactly the extensions of the
// original. NewHook returns the hook itself, to install with
// lock.WithHooks beside hooks of your own. docs/opentelemetry.md in the
// repository lists every span, attribute and metric, and the costs.
package otellock
