package asynqlock

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// The Scheduler's metrics, through OpenTelemetry's global MeterProvider,
// by syncguard.key.hash (of the Scheduler's key) and
// syncguard.scheduler.entry.
const (
	// TicksMetric counts the ticks the leader tried, by
	// syncguard.scheduler.outcome: enqueued, already (another term
	// enqueued a tick due in this one) or failed. A catch-up tick that
	// the term before enqueued is not counted (Tick.CatchUp).
	TicksMetric = "syncguard.scheduler.ticks"
	// MissedTicksMetric counts the ticks coalesced into a later one,
	// never enqueued (Tick.Missed).
	MissedTicksMetric = "syncguard.scheduler.ticks.missed"
	// EnqueueDelayMetric is how late each tick was enqueued, in seconds
	// (Tick.Delay).
	EnqueueDelayMetric = "syncguard.scheduler.enqueue.delay"
	// EntriesDifferMetric counts the entries found registered otherwise
	// by the leader (TickEntriesDiffer).
	EntriesDifferMetric = "syncguard.scheduler.entries.differ"
)

// schedMeterScope is the instrumentation scope of the metrics.
const schedMeterScope = "github.com/syncguard-go/syncguard/jobs/asynq"

// delayBuckets, in seconds: an enqueue on time takes milliseconds; a late
// one waited out a failover or an outage.
var delayBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// schedMetrics are a Scheduler's instruments.
type schedMetrics struct {
	keyHash attribute.KeyValue
	ticks   metric.Int64Counter
	missed  metric.Int64Counter
	delay   metric.Float64Histogram
	differ  metric.Int64Counter
}

func newSchedMetrics(key string) *schedMetrics {
	m := otel.GetMeterProvider().Meter(schedMeterScope)
	sm := &schedMetrics{keyHash: attribute.String("syncguard.key.hash", lockdriver.HashKey(key))}
	counter := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc))
		if err != nil {
			otel.Handle(err)
			return noop.Int64Counter{}
		}
		return c
	}
	sm.ticks = counter(TicksMetric, "Ticks the scheduler's leader tried to enqueue.")
	sm.missed = counter(MissedTicksMetric, "Ticks coalesced into a later one, never enqueued.")
	sm.differ = counter(EntriesDifferMetric, "Entries this replica registers otherwise than the leader.")
	var err error
	if sm.delay, err = m.Float64Histogram(EnqueueDelayMetric, metric.WithUnit("s"),
		metric.WithDescription("How late each tick was enqueued."),
		metric.WithExplicitBucketBoundaries(delayBuckets...)); err != nil {
		otel.Handle(err)
		sm.delay = noop.Float64Histogram{}
	}
	return sm
}

// tick records tk.
func (sm *schedMetrics) tick(tk Tick) {
	ctx := context.Background()
	set := metric.WithAttributes(sm.keyHash, attribute.String("syncguard.scheduler.entry", tk.EntryID))
	if tk.Kind == TickEntriesDiffer {
		sm.differ.Add(ctx, 1, set)
		return
	}
	outcome := "failed"
	switch {
	case tk.Err == nil:
		outcome = "enqueued"
		sm.delay.Record(ctx, tk.Delay.Seconds(), set)
		sm.missed.Add(ctx, int64(tk.Missed), set)
	case errors.Is(tk.Err, asynq.ErrTaskIDConflict):
		outcome = "already"
	case errors.Is(tk.Err, ErrDuplicateTask):
		outcome = "duplicate"
	}
	sm.ticks.Add(ctx, 1, set, metric.WithAttributes(attribute.String("syncguard.scheduler.outcome", outcome)))
}
