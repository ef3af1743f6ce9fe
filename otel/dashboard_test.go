package otellock_test

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
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
)

// dashboardGlob finds the Grafana dashboards shipped in docs/.
const dashboardGlob = "../docs/grafana/*.json"

// scrapeLabels are added by Prometheus when it scrapes a target, not by
// the exporter: a dashboard may filter on them.
var scrapeLabels = map[string]bool{"job": true, "instance": true}

// TestDashboardMetrics drives otellock through the OpenTelemetry Prometheus
// exporter until it has recorded every kind of measurement (waits that got
// the lock, gave up and failed, contention, a hand-off, hold times, a lost
// lease, slots of a limit, a failed call), scrapes the exporter as
// Prometheus would, and checks that every metric each Grafana dashboard in
// docs/grafana queries (panels and template variables) is a series in that
// scrape, that every label it filters or groups by is on that series, and
// that every literal label value it matches was recorded.
func TestDashboardMetrics(t *testing.T) {
	files, err := filepath.Glob(dashboardGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboard matches %s (%v)", dashboardGlob, err)
	}
	scrape := scrapeOtellock(t)
	if testing.Verbose() {
		t.Logf("scrape:\n%s", scrape.text)
	}

	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			queries := dashboardQueries(t, file)
			names := map[string]bool{}
			for _, q := range queries {
				metrics, labels, values := parsePromQL(q.expr)
				if len(metrics) == 0 {
					t.Errorf("%s: %q names no metric", q.where, q.expr)
				}
				for _, m := range metrics {
					names[m] = true
					if _, ok := scrape.series[m]; !ok {
						t.Errorf("%s: metric %s is not in the exporter's output (it has %s)", q.where, m, strings.Join(scrape.names(), ", "))
					}
				}
				for _, l := range labels {
					if scrapeLabels[l] {
						continue
					}
					if !slices.ContainsFunc(metrics, func(m string) bool { return scrape.series[m][l] != nil }) {
						t.Errorf("%s: label %s is on none of %v in the exporter's output", q.where, l, metrics)
					}
				}
				for l, vs := range values {
					for _, v := range vs {
						if !slices.ContainsFunc(metrics, func(m string) bool { return scrape.series[m][l][v] }) {
							t.Errorf("%s: no series of %v has %s=%q in the exporter's output", q.where, metrics, l, v)
						}
					}
				}
			}
			// Each kind of measurement otellock records is on the dashboard.
			for _, want := range []string{
				"syncguard_wait_duration_seconds_bucket", "syncguard_held_duration_seconds_bucket",
				"syncguard_contention_total", "syncguard_handoff_total", "syncguard_lease_lost_total",
				"syncguard_operation_duration_seconds_count",
			} {
				if !names[want] {
					t.Errorf("the dashboard never queries %s", want)
				}
			}
			t.Logf("%d queries over %d metrics: %v", len(queries), len(names), sortedKeys(names))
		})
	}
}

// docPrometheus is docs/opentelemetry.md's Prometheus snippet, kept
// compiling (it serves HTTP, so nothing calls it); internal/testkit/readme checks
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

// exposition is a scrape of the exporter: the series names, with the
// label names and values seen on each.
type exposition struct {
	text   string
	series map[string]map[string]map[string]bool // name -> label -> value
}

func (e exposition) names() []string { return sortedKeys(e.series) }

// scrapeOtellock records one of every measurement otellock makes through an
// SDK MeterProvider whose reader is the Prometheus exporter, registered on
// a registry of its own, and returns what promhttp serves from it.
func scrapeOtellock(t *testing.T) exposition {
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

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	text := rec.Body.String()
	return exposition{text: text, series: parseExposition(t, text)}
}

// parseExposition reads the Prometheus text format: every sample line's
// metric name, label names and label values.
func parseExposition(t *testing.T, text string) map[string]map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end <= 0 {
			t.Fatalf("scrape line %q", line)
		}
		name := line[:end]
		labels := out[name]
		if labels == nil {
			labels = map[string]map[string]bool{}
			out[name] = labels
		}
		if line[end] != '{' {
			continue
		}
		rest := line[end+1:]
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq <= 0 {
				t.Fatalf("scrape line %q: labels", line)
			}
			label := rest[:eq]
			rest = rest[eq+2:]
			var v strings.Builder
			for i := 0; ; i++ {
				if i >= len(rest) {
					t.Fatalf("scrape line %q: unterminated value", line)
				}
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					switch rest[i] {
					case 'n':
						v.WriteByte('\n')
					default:
						v.WriteByte(rest[i])
					}
					continue
				}
				if rest[i] == '"' {
					rest = strings.TrimPrefix(rest[i+1:], ",")
					break
				}
				v.WriteByte(rest[i])
			}
			if labels[label] == nil {
				labels[label] = map[string]bool{}
			}
			labels[label][v.String()] = true
		}
	}
	return out
}

// query is one PromQL expression of a dashboard, and where it is.
type query struct {
	where string
	expr  string
}

// dashboardQueries returns the expressions of every target of every panel
// (rows' nested panels included) and the metric queries of the template
// variables. It fails the test on a panel other than a row or a text
// panel without one.
func dashboardQueries(t *testing.T, file string) []query {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string  `json:"title"`
		Panels []panel `json:"panels"`
		Inputs []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			PluginID string `json:"pluginId"`
		} `json:"__inputs"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if !slices.ContainsFunc(d.Inputs, func(in struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	}) bool {
		return in.Name == "DS_PROMETHEUS" && in.Type == "datasource" && in.PluginID == "prometheus"
	}) {
		t.Errorf("%s: no DS_PROMETHEUS datasource input", file)
	}

	var out []query
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" || p.Type == "text" {
				continue
			}
			var n int
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					continue
				}
				n++
				out = append(out, query{where: "panel " + p.Title + " " + tg.RefID, expr: tg.Expr})
			}
			if n == 0 {
				t.Errorf("%s: panel %q has no query", file, p.Title)
			}
		}
	}
	walk(d.Panels)
	labelValues := regexp.MustCompile(`^\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				t.Fatalf("%s: variable %s: query %s", file, v.Name, v.Query)
			}
			q = obj.Query
		}
		where := "variable " + v.Name
		if m := labelValues.FindStringSubmatch(q); m != nil {
			// label_values(selector, label): the label must be on the
			// selector's series too.
			q = m[1]
			if !scrapeLabels[m[2]] {
				q = "count by (" + m[2] + ") (" + q + ")"
			}
		}
		out = append(out, query{where: where, expr: q})
	}
	return out
}

// panel is what the test reads of a Grafana panel.
type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	promMatcher  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")`)
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)`)
	promRange    = regexp.MustCompile(`\[[^\[\]]*\]`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promVariable = regexp.MustCompile(`\$\{?[A-Za-z0-9_]+\}?`)
	promLabel    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	// promWords are the PromQL keywords and literals that are not metric
	// names (functions and aggregations are told by the "(" after them).
	promWords = map[string]bool{
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"bool": true, "offset": true, "and": true, "or": true, "unless": true, "atan2": true,
		"inf": true, "nan": true, "Inf": true, "NaN": true, "start": true, "end": true,
	}
)

// parsePromQL returns the metric names a PromQL expression (with Grafana
// variables) selects, the label names it filters or groups by, and the
// literal values its equality matchers ask for, by label.
func parsePromQL(expr string) (metrics, labels []string, values map[string][]string) {
	values = map[string][]string{}
	seenLabel := map[string]bool{}
	addLabel := func(l string) {
		if !seenLabel[l] {
			seenLabel[l] = true
			labels = append(labels, l)
		}
	}
	for _, m := range promMatcher.FindAllStringSubmatch(expr, -1) {
		addLabel(m[1])
		// l="" selects the series without l: no value to look for.
		if v := m[3][1 : len(m[3])-1]; m[2] == "=" && v != "" && !promVariable.MatchString(v) {
			values[m[1]] = append(values[m[1]], v)
		}
	}
	rest := promString.ReplaceAllString(expr, " ")
	rest = promMatchers.ReplaceAllString(rest, " ")
	for _, g := range promGrouping.FindAllStringSubmatch(rest, -1) {
		for _, l := range promLabel.FindAllString(g[2], -1) {
			addLabel(l)
		}
	}
	rest = promGrouping.ReplaceAllString(rest, " ")
	rest = promRange.ReplaceAllString(rest, " ")
	rest = promVariable.ReplaceAllString(rest, " ")
	seen := map[string]bool{}
	for _, loc := range promIdent.FindAllStringIndex(rest, -1) {
		id := rest[loc[0]:loc[1]]
		if loc[0] > 0 && (rest[loc[0]-1] >= '0' && rest[loc[0]-1] <= '9' || rest[loc[0]-1] == '.') {
			continue // the exponent or unit of a number: 1e3, 5m
		}
		if strings.HasPrefix(strings.TrimLeft(rest[loc[1]:], " \t\n"), "(") || promWords[id] || seen[id] {
			continue // a function or aggregation, a keyword, a repeat
		}
		seen[id] = true
		metrics = append(metrics, id)
	}
	return metrics, labels, values
}

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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
