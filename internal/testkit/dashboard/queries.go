package dashboard

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// scrapeLabels are added by Prometheus when it scrapes a target, not by
// the exporter: a dashboard may filter on them.
var scrapeLabels = map[string]bool{"job": true, "instance": true}

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
