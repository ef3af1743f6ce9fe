package otellock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/syncguard-go/syncguard/lock"
)

// Concurrency limits through the decorator (lock.WithLimit): the result of
// Wrap always implements lock.Limiter and lock.SlotQueuer, forwarding to
// the wrapped backend when it has them, so a slot gets the spans and
// metrics of a lock, with the limit it was asked for.

// Attribute keys of concurrency limits.
const (
	// SlotKey is true on the spans of a slot of a concurrency limit
	// (lock.WithLimit), absent on a lock's (acquire and wait spans).
	SlotKey = attribute.Key("syncguard.slot")
	// LimitKey is the n of lock.WithLimit: the limit a slot was asked for
	// (acquire and wait spans, and the acquire, wait and contention
	// metrics of slots), or the limit a lookup found (lookup spans).
	LimitKey = attribute.Key("syncguard.limit")
	// HoldersKey is the number of live slots a lookup of a limit found
	// (lookup spans).
	HoldersKey = attribute.Key("syncguard.limit.holders")
)

var (
	_ lock.Limiter    = (*backend)(nil)
	_ lock.SlotQueuer = (*backend)(nil)
)

// errNoLimits is returned, without I/O, by the Limiter and SlotQueuer
// methods when the wrapped backend has no concurrency limits;
// lock.Acquire turns it into its InvalidArgument error.
var errNoLimits = fmt.Errorf("otellock: the wrapped backend has no concurrency limits: %w", errors.ErrUnsupported)

// AcquireSlot implements lock.Limiter: it calls the wrapped backend's
// AcquireSlot in a "syncguard.acquire" span carrying syncguard.slot and
// syncguard.limit, or returns an error matching errors.ErrUnsupported,
// without I/O or span, when the wrapped backend is not a lock.Limiter.
func (w *backend) AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (lock.Lease, error) {
	lim, ok := w.next.(lock.Limiter)
	if !ok {
		return lock.Lease{}, errNoLimits
	}
	return w.acquire(ctx, key, ttl, n, func(ctx context.Context) (lock.Lease, error) { return lim.AcquireSlot(ctx, key, id, n, ttl) })
}

// LookupLimit implements lock.Limiter: it calls the wrapped backend's
// LookupLimit in a "syncguard.lookup" span (syncguard.lookup.by "limit",
// with the limit and the number of holders found), or returns an error
// matching errors.ErrUnsupported, without I/O or span, when the wrapped
// backend is not a lock.Limiter.
func (w *backend) LookupLimit(ctx context.Context, key string) (*lock.LimitInfo, error) {
	lim, ok := w.next.(lock.Limiter)
	if !ok {
		return nil, errNoLimits
	}
	if ctx == nil {
		return lim.LookupLimit(ctx, key)
	}
	ctx, c := w.begin(ctx, opLookup)
	info, err := lim.LookupLimit(ctx, key)
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 7), key, w.rawKeys)
		attrs = append(attrs, LookupByKey.String("limit"))
		if info != nil {
			attrs = append(attrs, LimitKey.Int(info.Limit), HoldersKey.Int(len(info.Holders)))
		}
	}
	out := outFound
	if info == nil {
		out = outNotFound
	}
	w.end(ctx, c, out, err, attrs)
	return info, err
}

// JoinSlot implements lock.SlotQueuer: it forwards to the wrapped backend
// when that is a lock.SlotQueuer (each Attempt observed as an AcquireSlot),
// and otherwise returns an error matching errors.ErrUnsupported, so
// lock.Acquire waits for a slot as it would without the wrapper.
func (w *backend) JoinSlot(key, id string, n int, ttl, wait time.Duration) (lock.Waiter, error) {
	q, ok := w.next.(lock.SlotQueuer)
	if !ok {
		return nil, fmt.Errorf("otellock: the wrapped backend does not queue waiters for slots: %w", errors.ErrUnsupported)
	}
	next, err := q.JoinSlot(key, id, n, ttl, wait)
	if err != nil {
		return nil, err
	}
	return &waiter{Waiter: next, b: w, key: key, ttl: ttl, limit: n}, nil
}

// slotAttrs appends the attributes of a slot of limit n to the span
// attributes attrs; a lock (n == 0) has none.
func slotAttrs(attrs []attribute.KeyValue, n int) []attribute.KeyValue {
	if n == 0 {
		return attrs
	}
	return append(attrs, SlotKey.Bool(true), LimitKey.Int(n))
}

// limitSets are the metric attribute sets of slots of one limit n: the
// sets of locks with syncguard.limit added.
type limitSets struct {
	limit   attribute.KeyValue
	acquire [numOutcomes][]metric.RecordOption
	wait    [numOutcomes][]metric.RecordOption
	add     []metric.AddOption // the counters' (backend and limit)
}

// limitCache holds the limitSets of every n seen, built once per n: a
// program uses a few limits, and lock.MaxLimit bounds them anyway.
type limitCache struct {
	m sync.Map // int -> *limitSets
}

// sets returns the attribute sets of limit n.
func (in *instruments) limitSets(n int) *limitSets {
	if s, ok := in.limits.m.Load(n); ok {
		return s.(*limitSets)
	}
	s := &limitSets{limit: LimitKey.Int(n)}
	for out := range numOutcomes {
		set := attribute.NewSet(OperationKey.String(string(OperationAcquire)), OutcomeKey.String(out.String()), in.backend, s.limit)
		s.acquire[out] = []metric.RecordOption{metric.WithAttributeSet(set)}
		set = attribute.NewSet(OutcomeKey.String(out.String()), in.backend, s.limit)
		s.wait[out] = []metric.RecordOption{metric.WithAttributeSet(set)}
	}
	s.add = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(in.backend, s.limit))}
	got, _ := in.limits.m.LoadOrStore(n, s)
	return got.(*limitSets)
}
