// Package dashboard checks a Grafana dashboard shipped in docs/grafana
// against what an OpenTelemetry Prometheus exporter serves: every metric a
// panel or variable queries is a series of the scrape, every label it
// filters or groups by is on that series, and every literal value it
// matches was recorded. Tests that drive the code recording the metrics
// call Check with their scrape.
package dashboard
