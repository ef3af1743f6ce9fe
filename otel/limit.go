package otellock

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/syncguard-go/syncguard/lock"
)

// Concurrency limits (lock.WithLimit, on a lock.IDBackend): a slot gets
// the spans and metrics of a lock, with the limit it was asked for.

// Attribute keys of concurrency limits.
const (
	// SlotKey is true on the acquire and wait spans of a slot of a
	// concurrency limit.
	SlotKey = attribute.Key("syncguard.slot")
	// LimitKey is the n of lock.WithLimit a slot was asked for, or the
	// limit a lookup found.
	LimitKey = attribute.Key("syncguard.limit")
	// HoldersKey is the number of live slots a lookup of a limit found
	// (lookup spans).
	HoldersKey = attribute.Key("syncguard.limit.holders")
)

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

// limitCache holds the limitSets of every n seen, built once per n.
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
		set := attribute.NewSet(OperationKey.String(lock.OpAcquire.String()), OutcomeKey.String(out.String()), in.backend, s.limit)
		s.acquire[out] = []metric.RecordOption{metric.WithAttributeSet(set)}
		set = attribute.NewSet(OutcomeKey.String(out.String()), in.backend, s.limit)
		s.wait[out] = []metric.RecordOption{metric.WithAttributeSet(set)}
	}
	s.add = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(in.backend, s.limit))}
	got, _ := in.limits.m.LoadOrStore(n, s)
	return got.(*limitSets)
}
