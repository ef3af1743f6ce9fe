package dashboard

import (
	"slices"
	"sort"
	"testing"
)

// TestParsePromQL checks the dashboard test's reading of PromQL.
func TestParsePromQL(t *testing.T) {
	for _, tt := range []struct {
		expr    string
		metrics []string
		labels  []string
		values  map[string][]string
	}{
		{
			expr:    `histogram_quantile(0.99, sum by (le, syncguard_limit) (rate(syncguard_wait_duration_seconds_bucket{job=~"$job", syncguard_outcome="acquired", syncguard_limit!=""}[$__rate_interval])))`,
			metrics: []string{"syncguard_wait_duration_seconds_bucket"},
			labels:  []string{"job", "syncguard_outcome", "syncguard_limit", "le"},
			values:  map[string][]string{"syncguard_outcome": {"acquired"}},
		},
		{
			expr:    "sum(rate(syncguard_contention_total{syncguard_limit=\"\"}[5m])) / clamp_min(sum(rate(syncguard_operation_duration_seconds_count{syncguard_operation=\"acquire\"}[5m])), 1e-9) > bool 0.5",
			metrics: []string{"syncguard_contention_total", "syncguard_operation_duration_seconds_count"},
			labels:  []string{"syncguard_limit", "syncguard_operation"},
			values:  map[string][]string{"syncguard_operation": {"acquire"}},
		},
		{
			expr:    `sum without (instance) (increase(syncguard_lease_lost_total{syncguard_backend=~"${backend}"}[$__range])) or vector(0)`,
			metrics: []string{"syncguard_lease_lost_total"},
			labels:  []string{"syncguard_backend", "instance"},
			values:  map[string][]string{},
		},
	} {
		metrics, labels, values := parsePromQL(tt.expr)
		if !slices.Equal(metrics, tt.metrics) {
			t.Errorf("%s: metrics %v, want %v", tt.expr, metrics, tt.metrics)
		}
		sort.Strings(labels)
		sort.Strings(tt.labels)
		if !slices.Equal(labels, tt.labels) {
			t.Errorf("%s: labels %v, want %v", tt.expr, labels, tt.labels)
		}
		if len(values) != len(tt.values) {
			t.Errorf("%s: values %v, want %v", tt.expr, values, tt.values)
		}
		for k, v := range tt.values {
			if !slices.Equal(values[k], v) {
				t.Errorf("%s: values of %s %v, want %v", tt.expr, k, values[k], v)
			}
		}
	}
}
