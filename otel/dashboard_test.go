package otellock_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/testkit/dashboard"
)

// dashboardFile is the Grafana dashboard shipped in docs/.
const dashboardFile = "../docs/grafana/syncguard.json"

// TestDashboardMetrics drives otellock through the OpenTelemetry Prometheus
// exporter until it has recorded every kind of measurement (waits that got
// the lock, gave up and failed, contention, a hand-off, hold times, a lost
// lease, slots of a limit, a failed call, a term), scrapes the exporter as
// Prometheus would, and checks the dashboard's queries of otellock's
// metrics against that scrape (the Scheduler's panels are asynqlock's
// test's).
func TestDashboardMetrics(t *testing.T) {
	scrape := scrapeOtellock(t)
	if testing.Verbose() {
		t.Logf("scrape:\n%s", scrape.Text)
	}
	otellocks := func(m string) bool { return !strings.HasPrefix(m, "syncguard_scheduler_") }
	names := dashboard.Check(t, dashboardFile, scrape, otellocks,
		"syncguard_wait_duration_seconds_bucket", "syncguard_held_duration_seconds_bucket",
		"syncguard_contention_total", "syncguard_handoff_total", "syncguard_lease_lost_total",
		"syncguard_operation_duration_seconds_count")
	t.Logf("%d metrics: %v", len(names), names)
}

// docPrometheus is docs/opentelemetry.md's Prometheus snippet, kept
// compiling (it serves HTTP, so nothing calls it); testkit/readme checks
// that the document quotes the marked region verbatim.
var _ = docPrometheus

func docPrometheus(b lock.Backend) lock.Backend {
	// README: otel-prometheus
	exporter, err := otelprom.New() // registers on prometheus.DefaultRegisterer
	if err != nil {
		log.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	locks := otellock.Wrap(b, otellock.WithMeterProvider(mp)) // or otel.SetMeterProvider(mp) and Wrap(b)
	http.Handle("/metrics", promhttp.Handler())               // scraped by Prometheus
	// END README
	return locks
}

// scrapeOtellock records one of every measurement otellock makes through an
// SDK MeterProvider whose reader is the Prometheus exporter, registered on
// a registry of its own, and returns what promhttp serves from it.
func scrapeOtellock(t *testing.T) dashboard.Scrape {
	t.Helper()
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatalf("prometheus exporter: %v", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	inner, client := newRedis(t)
	t.Cleanup(func() { inner.Close() })
	b := otellock.Wrap(inner, otellock.WithMeterProvider(mp), otellock.WithTracerProvider(tracenoop.NewTracerProvider()))
	ctx := testCtx(t)

	// A wait that gets the lock, a busy acquire (contention), a wait that
	// gives up (timeout), then a hand-off to a queued waiter, whose release
	// records a hold time.
	key := uniqueKey("dashboard")
	l, err := lock.Acquire(ctx, b, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, key, 10*time.Second); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Acquire of a held key: %v, want ErrLocked", err)
	}
	if _, err := lock.Acquire(ctx, b, key, lock.WithWait(0)); lock.CodeOf(err) != lock.CodeAcquisitionTimeout && !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Acquire of a held key without a wait: %v, want busy", err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond) // the waiter has queued by then
		_ = b.Release(context.Background(), l.ID)
	}()
	handed, err := lock.Acquire(ctx, b, key, lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Second, NoJitter: true}), lock.WithWait(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, handed.ID); err != nil {
		t.Fatal(err)
	}

	// A limit of 2: two slots, a third refused, a fourth handed the slot
	// a release frees.
	lkey := uniqueKey("dashboard-limit")
	var slots []lock.Lease
	for range 2 {
		s, err := lock.Acquire(ctx, b, lkey, lock.WithLimit(2))
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	if _, err := lock.Acquire(ctx, b, lkey, lock.WithLimit(2), lock.WithWait(0)); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("third slot of 2: %v, want ErrLocked", err)
	}
	freed := slots[0]
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = b.Release(context.Background(), freed.ID)
	}()
	s, err := lock.Acquire(ctx, b, lkey, lock.WithLimit(2), lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Second, NoJitter: true}), lock.WithWait(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	slots[0] = s
	for _, s := range slots {
		if err := b.Release(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
	}

	// A failed call and a failed wait (a cancelled context: error.type
	// Aborted).
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Acquire(cancelled, key, time.Second); lock.CodeOf(err) != lock.CodeAborted {
		t.Fatalf("Acquire with a cancelled context: %v, want Aborted", err)
	}
	if _, err := lock.Acquire(cancelled, b, key); lock.CodeOf(err) != lock.CodeAborted {
		t.Fatalf("lock.Acquire with a cancelled context: %v, want Aborted", err)
	}

	// A lease lost under lock.Do: its key is deleted while the work runs.
	lost := uniqueKey("dashboard-lost")
	err = lock.Do(ctx, b, lost, func(ctx context.Context, _ lock.Lease) error {
		if err := client.Del(ctx, inner.Prefix()+":"+lost).Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("the lease loss went unnoticed")
		}
	}, lock.WithTTL(900*time.Millisecond))
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("Do with its key deleted: %v, want ErrLeaseLost", err)
	}

	// A term of lock/election's Lead, whose function fails.
	stop := errors.New("stop")
	if err := election.Lead(ctx, b, uniqueKey("dashboard-term"), "node-1", func(context.Context, lock.Lease) error {
		return stop
	}); !errors.Is(err, stop) {
		t.Fatalf("Lead = %v, want fn's error", err)
	}

	return dashboard.ScrapeRegistry(t, reg)
}
