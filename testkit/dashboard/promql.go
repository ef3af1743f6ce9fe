package dashboard

import (
	"regexp"
	"strings"
)

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
