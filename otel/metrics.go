package otellock

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/syncguard-go/syncguard/lock"
)

// Metric names; docs/opentelemetry.md has their attributes. Durations are
// histograms in seconds.
const (
	// OperationDurationMetric is the duration of each Backend call.
	OperationDurationMetric = "syncguard.operation.duration"
	// WaitDurationMetric is the whole wait of lock.Acquire or lock.Do.
	WaitDurationMetric = "syncguard.wait.duration"
	// HeldDurationMetric is the time from a grant to its release.
	HeldDurationMetric = "syncguard.held.duration"
	// ContentionMetric counts Acquire calls that found the key held.
	ContentionMetric = "syncguard.contention"
	// LeaseLostMetric counts leases lost while work ran under them.
	LeaseLostMetric = "syncguard.lease.lost"
	// HandoffMetric counts leases a release handed to a queued waiter.
	HandoffMetric = "syncguard.handoff"
	// TermMetric counts the election terms this process began leading.
	TermMetric = "syncguard.term"
	// TermActiveMetric is 1 while this process leads the key, else 0.
	TermActiveMetric = "syncguard.term.active"
	// TermDurationMetric is the duration of the terms this process led.
	TermDurationMetric = "syncguard.term.duration"
)

// Histogram buckets, in seconds: round trips, waits, and units of work.
var (
	operationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	waitBuckets      = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	heldBuckets      = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600}
	termBuckets      = []float64{0.1, 1, 10, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 7 * 24 * 3600}
)

// instruments are the metric instruments and their precomputed attribute
// sets, so that recording a common outcome allocates nothing.
type instruments struct {
	operation  metric.Float64Histogram
	wait       metric.Float64Histogram
	held       metric.Float64Histogram
	contention metric.Int64Counter
	leaseLost  metric.Int64Counter
	handoff    metric.Int64Counter
	term       metric.Int64Counter
	termActive metric.Int64UpDownCounter
	termTime   metric.Float64Histogram

	backend attribute.KeyValue
	// opAttrs[kind][outcome] records a measured operation's duration.
	opAttrs [numKinds][numOutcomes][]metric.RecordOption
	// waitAttrs[outcome] records a wait's duration.
	waitAttrs [numOutcomes][]metric.RecordOption
	// backendOnly carries just syncguard.backend.
	backendRecord []metric.RecordOption
	backendAdd    []metric.AddOption
	// limits are the sets of slots, per limit (see limitSets).
	limits limitCache
}

func newInstruments(mp metric.MeterProvider, backend string) *instruments {
	m := mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	in := &instruments{backend: BackendKey.String(backend)}
	var err error
	if in.operation, err = m.Float64Histogram(OperationDurationMetric,
		metric.WithDescription("Duration of lock backend operations."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(operationBuckets...)); err != nil {
		otel.Handle(err)
		in.operation = noop.Float64Histogram{}
	}
	if in.wait, err = m.Float64Histogram(WaitDurationMetric,
		metric.WithDescription("Time spent acquiring a lock, retries and pauses included."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(waitBuckets...)); err != nil {
		otel.Handle(err)
		in.wait = noop.Float64Histogram{}
	}
	if in.held, err = m.Float64Histogram(HeldDurationMetric,
		metric.WithDescription("Time from acquiring a lease to releasing it."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(heldBuckets...)); err != nil {
		otel.Handle(err)
		in.held = noop.Float64Histogram{}
	}
	if in.contention, err = m.Int64Counter(ContentionMetric,
		metric.WithDescription("Acquire attempts that found the key held by another lease."),
		metric.WithUnit("{contention}")); err != nil {
		otel.Handle(err)
		in.contention = noop.Int64Counter{}
	}
	if in.leaseLost, err = m.Int64Counter(LeaseLostMetric,
		metric.WithDescription("Leases lost while work ran under them."),
		metric.WithUnit("{lease}")); err != nil {
		otel.Handle(err)
		in.leaseLost = noop.Int64Counter{}
	}
	if in.handoff, err = m.Int64Counter(HandoffMetric,
		metric.WithDescription("Leases handed over by a release to a waiting acquisition."),
		metric.WithUnit("{lease}")); err != nil {
		otel.Handle(err)
		in.handoff = noop.Int64Counter{}
	}
	in.newTermInstruments(m)

	for o := range numKinds {
		if !measured(o) {
			continue
		}
		for out := range numOutcomes {
			set := attribute.NewSet(OperationKey.String(o.String()), OutcomeKey.String(out.String()), in.backend)
			in.opAttrs[o][out] = []metric.RecordOption{metric.WithAttributeSet(set)}
		}
	}
	for out := range numOutcomes {
		set := attribute.NewSet(OutcomeKey.String(out.String()), in.backend)
		in.waitAttrs[out] = []metric.RecordOption{metric.WithAttributeSet(set)}
	}
	set := attribute.NewSet(in.backend)
	in.backendRecord = []metric.RecordOption{metric.WithAttributeSet(set)}
	in.backendAdd = []metric.AddOption{metric.WithAttributeSet(set)}
	return in
}

// errorRecord is the attribute set of a failed operation, with error.type
// (and syncguard.limit for a slot of limit n > 0).
func (in *instruments) errorRecord(o lock.OpKind, n int, errType string) metric.RecordOption {
	kvs := []attribute.KeyValue{OperationKey.String(o.String()), OutcomeKey.String(OutcomeError),
		in.backend, ErrorTypeKey.String(errType)}
	if n > 0 {
		kvs = append(kvs, LimitKey.Int(n))
	}
	return metric.WithAttributes(kvs...)
}

// waitErrorRecord is the attribute set of a failed wait, with error.type
// (and syncguard.limit for a slot of limit n > 0).
func (in *instruments) waitErrorRecord(n int, errType string) metric.RecordOption {
	kvs := []attribute.KeyValue{OutcomeKey.String(OutcomeError), in.backend, ErrorTypeKey.String(errType)}
	if n > 0 {
		kvs = append(kvs, LimitKey.Int(n))
	}
	return metric.WithAttributes(kvs...)
}

// recordOp records d seconds of operation o with outcome out; n > 0 is
// the limit of a slot's acquire.
func (h *Hook) recordOp(ctx context.Context, o lock.OpKind, n int, out outcome, err error, d float64) {
	switch {
	case out == outError:
		h.inst.operation.Record(ctx, d, h.inst.errorRecord(o, n, errorType(err)))
	case n > 0:
		h.inst.operation.Record(ctx, d, h.inst.limitSets(n).acquire[out]...)
	default:
		h.inst.operation.Record(ctx, d, h.inst.opAttrs[o][out]...)
	}
}

// newTermInstruments makes the instruments of the terms of
// lock/election's Lead.
func (in *instruments) newTermInstruments(m metric.Meter) {
	var err error
	if in.term, err = m.Int64Counter(TermMetric,
		metric.WithDescription("Terms of leadership this process began."),
		metric.WithUnit("{term}")); err != nil {
		otel.Handle(err)
		in.term = noop.Int64Counter{}
	}
	if in.termActive, err = m.Int64UpDownCounter(TermActiveMetric,
		metric.WithDescription("Terms of leadership this process holds: 1 while it leads the key."),
		metric.WithUnit("{term}")); err != nil {
		otel.Handle(err)
		in.termActive = noop.Int64UpDownCounter{}
	}
	if in.termTime, err = m.Float64Histogram(TermDurationMetric,
		metric.WithDescription("Duration of the terms of leadership this process led."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(termBuckets...)); err != nil {
		otel.Handle(err)
		in.termTime = noop.Float64Histogram{}
	}
}
