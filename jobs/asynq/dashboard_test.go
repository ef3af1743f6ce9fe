package asynqlock_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/testkit/dashboard"
)

// TestSchedulerDashboard runs a failover between two replicas whose
// entries differ, through OpenTelemetry's global MeterProvider with the
// Prometheus exporter, and checks the Grafana board's Scheduler panels
// against the scrape.
func TestSchedulerDashboard(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	otel.SetMeterProvider(mp) // the Scheduler's metrics go to the global provider

	e := newEnv(t)
	task := asynq.NewTask("tick", nil)
	v1 := func(s *asynqlock.Scheduler) error {
		_, err := s.Register("@every 1s", task, asynq.Queue(e.queue), asynqlock.EntryName("report"))
		return err
	}
	v2 := func(s *asynqlock.Scheduler) error {
		_, err := s.Register("@every 1s", task, asynq.Queue(e.queue), asynq.MaxRetry(2), asynqlock.EntryName("report"))
		return err
	}
	checkOnce(t, e, failover(t, e, "dashboard", func() {}, v1, v2))

	scheduler := func(m string) bool { return strings.HasPrefix(m, "syncguard_scheduler_") }
	names := dashboard.Check(t, "../../docs/grafana/syncguard.json", dashboard.ScrapeRegistry(t, reg), scheduler,
		"syncguard_scheduler_ticks_total", "syncguard_scheduler_ticks_missed_total",
		"syncguard_scheduler_enqueue_delay_seconds_bucket", "syncguard_scheduler_entries_differ_total")
	t.Logf("%d metrics: %v", len(names), names)
}
