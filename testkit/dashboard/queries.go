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
	d := readDashboard(t, file)
	if !slices.ContainsFunc(d.Inputs, func(in input) bool {
		return in.Name == "DS_PROMETHEUS" && in.Type == "datasource" && in.PluginID == "prometheus"
	}) {
		t.Errorf("%s: no DS_PROMETHEUS datasource input", file)
	}
	out := panelQueries(t, file, d.Panels, nil)
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			out = append(out, variableQuery(t, file, v))
		}
	}
	return out
}

// dashboard is what the test reads of a Grafana dashboard.
type dashboard struct {
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Inputs     []input `json:"__inputs"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

// input is one of a dashboard's inputs, such as its datasource.
type input struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	PluginID string `json:"pluginId"`
}

// variable is one of a dashboard's template variables.
type variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"`
}

// readDashboard reads and decodes the dashboard in file.
func readDashboard(t *testing.T, file string) dashboard {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return d
}

// panelQueries appends to out the expressions of the targets of ps and
// their nested panels, failing the test on a panel without one.
func panelQueries(t *testing.T, file string, ps []panel, out []query) []query {
	t.Helper()
	for _, p := range ps {
		out = panelQueries(t, file, p.Panels, out)
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
	return out
}

// labelValues matches a variable's label_values(selector, label) query.
var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)

// variableQuery returns the metric query of a query variable: a query
// string, or an object's query field.
func variableQuery(t *testing.T, file string, v variable) query {
	t.Helper()
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
	if m := labelValues.FindStringSubmatch(q); m != nil {
		// label_values(selector, label): the label must be on the
		// selector's series too.
		q = m[1]
		if !scrapeLabels[m[2]] {
			q = "count by (" + m[2] + ") (" + q + ")"
		}
	}
	return query{where: "variable " + v.Name, expr: q}
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
