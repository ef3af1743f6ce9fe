package dashboard

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Scrape is what a Prometheus registry serves: the text, and the series
// names with the label names and values seen on each.
type Scrape struct {
	Text   string
	Series map[string]map[string]map[string]bool // name -> label -> value
}

// Names returns the series names, sorted.
func (s Scrape) Names() []string { return sortedKeys(s.Series) }

// ScrapeRegistry returns what promhttp serves from reg.
func ScrapeRegistry(t *testing.T, reg *prometheus.Registry) Scrape {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	text := rec.Body.String()
	return Scrape{Text: text, Series: parseExposition(t, text)}
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
