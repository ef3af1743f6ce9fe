package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// skipReasons groups the skipped tests of a run by the reason each gave, so
// that a run where a whole class of tests skipped (no redis-server, say) says
// so in one line instead of hiding it among the passes.
type skipReasons struct {
	groups []*skipGroup
}

// skipGroup is the tests that skipped for one reason.
type skipGroup struct {
	reason string
	n      int
	first  string // "package Test" of the first
}

// location is the file:line prefix testing puts before a logged message.
var location = regexp.MustCompile(`^[^\s:]+\.go:\d+: `)

// add counts test of pkg, skipped; output is its package's output so far, in
// which the test's last message (t.Skip's, usually) is the reason.
func (r *skipReasons) add(pkg, test string, output []outputLine) {
	reason := ""
	for i := len(output) - 1; i >= 0 && reason == ""; i-- {
		if output[i].test == test {
			if text := strings.TrimSpace(output[i].text); location.MatchString(text) {
				reason = location.ReplaceAllString(text, "")
			}
		}
	}
	if reason == "" {
		reason = "(no reason given)"
	}
	for _, g := range r.groups {
		if g.reason == reason {
			g.n++
			return
		}
	}
	r.groups = append(r.groups, &skipGroup{reason: reason, n: 1, first: pkg + " " + test})
}

// print writes the reasons, the most frequent first, with the first test
// of each reason only one test gave.
func (r *skipReasons) print(w io.Writer) {
	if len(r.groups) == 0 {
		return
	}
	slices.SortStableFunc(r.groups, func(a, b *skipGroup) int { return b.n - a.n })
	fmt.Fprintf(w, "skipped tests, by reason:\n")
	for _, g := range r.groups {
		if g.n == 1 {
			fmt.Fprintf(w, "  %6d  %s: %s\n", g.n, g.first, g.reason)
		} else {
			fmt.Fprintf(w, "  %6d  %s (%s, ...)\n", g.n, g.reason, g.first)
		}
	}
}
