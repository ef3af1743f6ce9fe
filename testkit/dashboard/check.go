package dashboard

import (
	"slices"
	"strings"
	"testing"
)

// Check reads the dashboard file and checks each of its queries that
// selects a metric mine reports true for against scrape; want are metrics
// the dashboard must query. It returns the metrics checked.
func Check(t *testing.T, file string, scrape Scrape, mine func(metric string) bool, want ...string) []string {
	t.Helper()
	names := map[string]bool{}
	for _, q := range dashboardQueries(t, file) {
		metrics, labels, values := parsePromQL(q.expr)
		if len(metrics) == 0 {
			t.Errorf("%s: %q names no metric", q.where, q.expr)
		}
		if !slices.ContainsFunc(metrics, mine) {
			continue
		}
		for _, m := range metrics {
			names[m] = true
			if _, ok := scrape.Series[m]; !ok {
				t.Errorf("%s: metric %s is not in the exporter's output (it has %s)", q.where, m, strings.Join(scrape.Names(), ", "))
			}
		}
		for _, l := range labels {
			if !scrapeLabels[l] && !slices.ContainsFunc(metrics, func(m string) bool { return scrape.Series[m][l] != nil }) {
				t.Errorf("%s: label %s is on none of %v in the exporter's output", q.where, l, metrics)
			}
		}
		for l, vs := range values {
			for _, v := range vs {
				if !slices.ContainsFunc(metrics, func(m string) bool { return scrape.Series[m][l][v] }) {
					t.Errorf("%s: no series of %v has %s=%q in the exporter's output", q.where, metrics, l, v)
				}
			}
		}
	}
	for _, w := range want {
		if !names[w] {
			t.Errorf("%s never queries %s", file, w)
		}
	}
	return sortedKeys(names)
}
