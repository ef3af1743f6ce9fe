package otellock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/syncguard-go/syncguard/lock"
)

// backend is the decorator returned by Wrap.
type backend struct {
	next    lock.Backend
	nextObs lock.Observer // next as an Observer, when it is one
	// tracer is nil when the TracerProvider is the no-op one: no span can
	// ever record, so none is started.
	tracer    trace.Tracer
	inst      *instruments
	held      *heldTracker
	rawKeys   bool
	filters   []Filter                // all must return true for a span to start
	startOpts []trace.SpanStartOption // span kind and the WithSpanAttributes
}

var (
	_ lock.Backend    = (*backend)(nil)
	_ lock.Observer   = (*backend)(nil)
	_ lock.IDAcquirer = (*backend)(nil)
)

// Wrap returns b decorated with OpenTelemetry: a span and a duration
// measurement for every Backend call, and, because the result also
// implements lock.Observer, a span for the whole wait of lock.Acquire and
// lock.Do and a record of every lease lock.Keep loses. Use the result
// wherever b was used; b must not be nil.
//
// The spans and metrics never carry a raw key (only its lock.HashKey,
// unless WithRawKeys) and never a lock id (only its hash). Contention and
// a lease that is not held are outcomes, with span status Unset; only
// system failures set status Error. Calls with a nil context go straight
// to b, which rejects them, unobserved. WithFilter skips the spans of
// chosen operations (their metrics stay); WithSpanAttributes adds
// attributes of your own to every span.
//
// When b implements lock.Observer itself, the result forwards to it; when
// b implements lock.Completer, so does the result (ReleaseDone is observed
// as a release), and when b is also a lock.Recorder, so is the result
// (ReleaseRecord observed as a release); when b implements
// lock.BatchExtender, so does the result (one "syncguard.extend_batch"
// span per batch), and lock.Keep keeps its leases alive from one scheduler
// goroutine, as it does for b. The result always implements
// lock.IDAcquirer, forwarding to b when b is one (each AcquireID observed
// as an acquire) and reporting errors.ErrUnsupported otherwise, so
// lock.Acquire uses one lock id for all its attempts exactly when b can;
// likewise lock.Queuer (each Attempt observed as an acquire), so waiters
// keep their place in the backend's queue of the key, and a lease a
// release hands over to a waiter gets an acquire span of its own (with
// syncguard.handoff). Likewise, for concurrency limits (lock.WithLimit),
// lock.Limiter (each AcquireSlot observed as an acquire, with the limit)
// and lock.SlotQueuer: lock.Acquire rejects WithLimit on the result
// exactly when it would on b.
func Wrap(b lock.Backend, opts ...Option) lock.Backend {
	if b == nil {
		panic("otellock: Wrap(nil)")
	}
	c := newConfig(opts)
	w := &backend{
		next:      b,
		inst:      newInstruments(c.meterProvider, b.Capabilities().Backend),
		held:      newHeldTracker(),
		rawKeys:   c.rawKeys,
		filters:   c.filters,
		startOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)},
	}
	if len(c.spanAttrs) > 0 {
		w.startOpts = append(w.startOpts, trace.WithAttributes(c.spanAttrs...))
	}
	if _, noop := c.tracerProvider.(tracenoop.TracerProvider); !noop {
		w.tracer = c.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version()))
	}
	w.nextObs, _ = b.(lock.Observer)
	cb, isCompleter := b.(lock.Completer)
	rb, isRecorder := b.(lock.Recorder)
	be, isBatcher := b.(lock.BatchExtender)
	switch {
	case isCompleter && isRecorder && isBatcher:
		return &recorderBatcher{recorder: &recorder{completer: &completer{backend: w, next: cb}, next: rb}, next: be}
	case isCompleter && isRecorder:
		return &recorder{completer: &completer{backend: w, next: cb}, next: rb}
	case isCompleter && isBatcher:
		return &completerBatcher{completer: &completer{backend: w, next: cb}, next: be}
	case isCompleter:
		return &completer{backend: w, next: cb}
	case isBatcher:
		return &batcher{backend: w, next: be}
	}
	return w
}

// Acquire calls the wrapped backend's Acquire in a "syncguard.acquire"
// span.
func (w *backend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	return w.acquire(ctx, key, ttl, 0, func(ctx context.Context) (lock.Lease, error) { return w.next.Acquire(ctx, key, ttl) })
}

// NewLockID implements lock.IDAcquirer and lock.Limiter: it forwards to
// the wrapped backend when that is a lock.IDAcquirer or a lock.Limiter,
// and otherwise returns an error matching errors.ErrUnsupported, so
// lock.Acquire falls back to Acquire (and rejects lock.WithLimit).
func (w *backend) NewLockID(key string) (string, error) {
	if ia, ok := w.next.(interface{ NewLockID(string) (string, error) }); ok {
		return ia.NewLockID(key)
	}
	return "", fmt.Errorf("otellock: the wrapped backend does not take lock ids: %w", errors.ErrUnsupported)
}

// AcquireID calls the wrapped backend's AcquireID in a "syncguard.acquire"
// span, like Acquire.
func (w *backend) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error) {
	ia, ok := w.next.(lock.IDAcquirer)
	if !ok {
		return lock.Lease{}, fmt.Errorf("otellock: the wrapped backend does not take lock ids: %w", errors.ErrUnsupported)
	}
	return w.acquire(ctx, key, ttl, 0, func(ctx context.Context) (lock.Lease, error) { return ia.AcquireID(ctx, key, id, ttl) })
}

// acquire observes do, an acquisition of key for ttl: of the lock, or of
// a slot of a limit of n when n > 0. Within a wait of lock.Acquire it
// tells the wait's observer what the attempt came to (see waitFromContext).
func (w *backend) acquire(ctx context.Context, key string, ttl time.Duration, n int, do func(ctx context.Context) (lock.Lease, error)) (lock.Lease, error) {
	if ctx == nil {
		return do(ctx)
	}
	o := w.waitFromContext(ctx)
	ctx, c := w.begin(ctx, opAcquire)
	c.limit = n
	l, err := do(ctx)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 9), key, w.rawKeys)
		attrs = append(attrs, TTLKey.Float64(seconds(ttl)))
		attrs = slotAttrs(attrs, n)
		if err == nil {
			attrs = append(attrs, FenceKey.String(string(l.Fence)), LockIDHashKey.String(lock.HashKey(l.ID)))
		}
	}
	if o != nil {
		o.attempted(n, err == nil)
	}
	switch w.end(ctx, c, outAcquired, err, attrs) {
	case outAcquired:
		w.track(ctx, l)
	case outLocked:
		if n > 0 {
			w.inst.contention.Add(ctx, 1, w.inst.limitSets(n).add...)
		} else {
			w.inst.contention.Add(ctx, 1, w.inst.backendAdd...)
		}
	}
	return l, err
}

// track starts the held-duration measurement of lease l, granted now.
func (w *backend) track(ctx context.Context, l lock.Lease) {
	if w.inst.held.Enabled(ctx) {
		w.held.add(l, time.Now())
	}
}

// Release calls the wrapped backend's Release in a "syncguard.release"
// span, and records how long the lease was held when it was acquired
// through this wrapper.
func (w *backend) Release(ctx context.Context, id string) error {
	return w.release(ctx, id, func(ctx context.Context) error { return w.next.Release(ctx, id) })
}

// release observes do, the release of the lease id.
func (w *backend) release(ctx context.Context, id string, do func(ctx context.Context) error) error {
	if ctx == nil {
		return do(ctx)
	}
	ctx, c := w.begin(ctx, opRelease)
	err := do(ctx)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = append(make([]attribute.KeyValue, 0, 3), LockIDHashKey.String(lock.HashKey(id)))
	}
	if out := w.end(ctx, c, outReleased, err, attrs); out != outError && w.held.len() > 0 {
		// Released, or not held any more: either way the lease is over.
		if acquired, ok := w.held.remove(id); ok && out == outReleased {
			w.inst.held.Record(ctx, seconds(time.Since(acquired)), w.inst.backendRecord...)
		}
	}
	return err
}

// Extend calls the wrapped backend's Extend in a "syncguard.extend" span.
func (w *backend) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	if ctx == nil {
		return w.next.Extend(ctx, id, ttl)
	}
	ctx, c := w.begin(ctx, opExtend)
	exp, err := w.next.Extend(ctx, id, ttl)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = append(make([]attribute.KeyValue, 0, 4), LockIDHashKey.String(lock.HashKey(id)), TTLKey.Float64(seconds(ttl)))
	}
	w.trackExtend(id, w.end(ctx, c, outExtended, err, attrs), exp)
	return exp, err
}

// trackExtend updates the held-duration tracker after an extend of lease
// id: a new expiry, or the lease gone (a system error tells nothing).
func (w *backend) trackExtend(id string, out outcome, exp time.Time) {
	switch {
	case w.held.len() == 0:
	case out == outExtended:
		w.held.extend(id, exp)
	case out != outError:
		w.held.remove(id)
	}
}

// IsLocked calls the wrapped backend's IsLocked in a
// "syncguard.is_locked" span.
func (w *backend) IsLocked(ctx context.Context, key string) (bool, error) {
	if ctx == nil {
		return w.next.IsLocked(ctx, key)
	}
	ctx, c := w.begin(ctx, opIsLocked)
	locked, err := w.next.IsLocked(ctx, key)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 4), key, w.rawKeys)
	}
	out := outFree
	if locked {
		out = outHeld
	}
	w.end(ctx, c, out, err, attrs)
	return locked, err
}

// LookupKey calls the wrapped backend's LookupKey in a "syncguard.lookup"
// span.
func (w *backend) LookupKey(ctx context.Context, key string) (*lock.Info, error) {
	if ctx == nil {
		return w.next.LookupKey(ctx, key)
	}
	ctx, c := w.begin(ctx, opLookup)
	info, err := w.next.LookupKey(ctx, key)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 6), key, w.rawKeys)
		attrs = append(attrs, LookupByKey.String("key"))
		attrs = appendInfo(attrs, info, false)
	}
	w.end(ctx, c, lookupOutcome(info), err, attrs)
	return info, err
}

// LookupID calls the wrapped backend's LookupID in a "syncguard.lookup"
// span.
func (w *backend) LookupID(ctx context.Context, id string) (*lock.Info, error) {
	if ctx == nil {
		return w.next.LookupID(ctx, id)
	}
	ctx, c := w.begin(ctx, opLookup)
	info, err := w.next.LookupID(ctx, id)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = append(make([]attribute.KeyValue, 0, 6), LockIDHashKey.String(lock.HashKey(id)), LookupByKey.String("id"))
		attrs = appendInfo(attrs, info, true)
	}
	w.end(ctx, c, lookupOutcome(info), err, attrs)
	return info, err
}

// appendInfo adds what a lookup found: the fence, and the key hash when
// the lookup was by id.
func appendInfo(attrs []attribute.KeyValue, info *lock.Info, byID bool) []attribute.KeyValue {
	if info == nil {
		return attrs
	}
	attrs = append(attrs, FenceKey.String(string(info.Fence)))
	if byID && info.KeyHash != "" {
		attrs = append(attrs, KeyHashKey.String(info.KeyHash))
	}
	return attrs
}

func lookupOutcome(info *lock.Info) outcome {
	if info == nil {
		return outNotFound
	}
	return outFound
}

// Capabilities returns the wrapped backend's capabilities.
func (w *backend) Capabilities() lock.Capabilities { return w.next.Capabilities() }
