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
// backend's extensions (lock.IDBackend, lock.Recorder), and lock.Acquire
// queues, limits and keeps leases alive in batches through it exactly as
// on the bare backend. [NewHook] returns that hook, to install with
// lock.WithHooks beside hooks of your own.
//
// # Spans
//
// Each backend operation is a span of kind INTERNAL, a child of the span
// in the call's context: "syncguard.acquire" (Acquire, AcquireID,
// AcquireSlot and the attempts of a queued waiter), "syncguard.release"
// (Release, and ReleaseDone and ReleaseRecord of a lock.Recorder),
// "syncguard.extend", "syncguard.is_locked", "syncguard.lookup" (by key,
// by id or of a limit), "syncguard.is_done" and "syncguard.record" (the
// reads of a lock.Recorder). A Redis client instrumented with redisotel
// puts its EVALSHA spans under them.
//
// lock.Acquire, lock.Do and lock.Hold pass their wait through the hook
// too: a "syncguard.wait" span covers the whole acquisition, with the
// attempts' "syncguard.acquire" spans under it, an "attempt" event for
// every attempt that did not get the lock (its number, outcome and the
// pause before the next one), and, when it ends, the outcome, the number
// of attempts, the total wait and the fence. When lock.Keep (the heartbeat
// of lock.Do and the middleware) loses a lease, a "syncguard.lease_lost"
// event goes on the span of the context the lease is kept under,
// typically the request's. On a lock.IDBackend (the Redis backend is one)
// lock.Keep extends all leases from one scheduler, and each batch is one
// "syncguard.extend_batch" span of its own. When the backend queues
// waiters (lock.IDBackend's Join; the Redis backend does) and a release
// hands the lease to a waiting lock.Acquire, no attempt of the waiter took
// it: it gets an acquire span of no duration under the wait span, with
// syncguard.handoff=true and the fence; the holder's release span carries
// syncguard.handoff=true and syncguard.handoff.fence, the waiter's fence
// (when the backend tells, as the Redis backend does: lock.HandedOver).
//
// # Concurrency limits
//
// The acquire and wait spans of a slot (lock.WithLimit, on a
// lock.IDBackend) carry syncguard.slot=true and syncguard.limit (the n of
// lock.WithLimit); a lookup of a limit (LookupLimit) is a
// "syncguard.lookup" span with syncguard.lookup.by "limit", the limit and
// syncguard.limit.holders. The acquire durations, waits, contention and
// hand-offs of slots carry syncguard.limit too, so a dashboard can tell
// "limit reached" from a busy lock; how many slots are in use is not
// measured (it would take a lookup per call). Over a backend that is not a
// lock.IDBackend, lock.Acquire rejects lock.WithLimit as it would on the
// bare backend, before any I/O.
//
// Attributes: syncguard.key.hash (lock.HashKey of the key), syncguard.key
// (the raw key, only with [WithRawKeys]), syncguard.lock_id.hash,
// syncguard.ttl (seconds), syncguard.fence, syncguard.outcome,
// syncguard.backend, syncguard.lookup.by, syncguard.attempts,
// syncguard.wait.duration (seconds), syncguard.handoff,
// syncguard.handoff.fence, syncguard.slot,
// syncguard.limit, syncguard.limit.holders and error.type. The raw lock id is
// never recorded: it is the credential that releases the lock.
//
// syncguard.outcome is one of acquired, locked, released, extended,
// not_found, expired, not_owner, not_held (release and extend, from
// lock.NotHeldError), held, free (is_locked), found, not_found (lookup),
// timeout (a wait that gave up) and error. Contention and a lease that is
// not held are outcomes: the span status stays Unset. A system failure sets
// status Error, records the error, and sets error.type to its lock.Code
// (ServiceUnavailable, NetworkTimeout, Aborted, ...), or to the Go type of
// an error that has none.
//
// # Choosing spans
//
// [WithFilter] skips the spans of chosen operations, by [Operation] and the
// call's context: status checks (is_locked, lookups) that a dashboard polls,
// say, or every call of a health check. A filtered call is still measured:
// the metrics below do not depend on filters. [WithSpanAttributes] adds
// attributes of your own (a component, a tenant) to every span the hook
// starts.
//
// # Metrics
//
// Histograms in seconds: syncguard.operation.duration (by
// syncguard.operation, syncguard.outcome, syncguard.backend, and
// error.type on errors), syncguard.wait.duration (by syncguard.outcome and
// syncguard.backend) and syncguard.held.duration (from the grant to the
// release, both through the same hook, by syncguard.backend). Counters:
// syncguard.contention ({contention}: Acquire calls that found the key
// held), syncguard.lease.lost ({lease}) and syncguard.handoff ({lease}:
// leases a release handed over to a waiter). Slots add syncguard.limit to
// the acquire, wait, contention and hand-off measurements. Metric
// attributes never carry keys or ids.
//
// # Cost
//
// Attributes are computed only for spans that record, and metric attribute
// sets once, in NewHook. With the no-op providers (trace/noop, metric/noop)
// the hook starts no span and allocates nothing (lock.WithHooks allocates
// the lock.Op of each operation); with the global providers and no SDK
// installed it costs what the OpenTelemetry API's delegating tracer costs,
// a few small allocations.
package otellock
