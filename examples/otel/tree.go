package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// node is a span in a trace tree.
type node struct {
	span     sdktrace.ReadOnlySpan
	children []*node
}

// buildTree returns the tree of spans under the span root, children in
// start order, or nil when root is not among spans.
func buildTree(spans []sdktrace.ReadOnlySpan, root trace.SpanContext) *node {
	nodes := map[trace.SpanID]*node{}
	for _, s := range spans {
		if s.SpanContext().TraceID() == root.TraceID() {
			nodes[s.SpanContext().SpanID()] = &node{span: s}
		}
	}
	for _, n := range nodes {
		if p, ok := nodes[n.span.Parent().SpanID()]; ok && n.span.Parent().IsValid() {
			p.children = append(p.children, n)
		}
	}
	for _, n := range nodes {
		sort.Slice(n.children, func(i, j int) bool {
			return n.children[i].span.StartTime().Before(n.children[j].span.StartTime())
		})
	}
	return nodes[root.SpanID()]
}

// print writes the tree, one span a line: name, duration and the
// attributes worth a glance, then the span's events.
func (n *node) print(w io.Writer) { n.printIndent(w, "", "") }

func (n *node) printIndent(w io.Writer, first, rest string) {
	s := n.span
	fmt.Fprintf(w, "%s%s  %s%s\n", first, s.Name(), round(s.EndTime().Sub(s.StartTime())), summary(s.Attributes()))
	for _, e := range s.Events() {
		fmt.Fprintf(w, "%s  · %s%s\n", rest+bar(len(n.children) > 0), e.Name, summary(e.Attributes))
	}
	for i, c := range n.children {
		if i == len(n.children)-1 {
			c.printIndent(w, rest+"└─ ", rest+"   ")
		} else {
			c.printIndent(w, rest+"├─ ", rest+"│  ")
		}
	}
}

func bar(children bool) string {
	if children {
		return "│"
	}
	return " "
}

// shown are the attributes printed, with their short names.
var shown = []struct {
	key   attribute.Key
	label string
}{
	{"http.response.status_code", "status"},
	{"syncguard.attempt", "attempt"},
	{"syncguard.outcome", "outcome"},
	{"syncguard.attempts", "attempts"},
	{"syncguard.fence", "fence"},
	{"syncguard.task.outcome", "task.outcome"},
	{"syncguard.handoff", "handoff"},
	{"syncguard.wait.next", "next"},
	{"error.type", "error.type"},
}

func summary(kvs []attribute.KeyValue) string {
	var b strings.Builder
	set := attribute.NewSet(kvs...)
	for _, a := range shown {
		if v, ok := set.Value(a.key); ok {
			val := v.String()
			if a.key == "syncguard.wait.next" {
				val = round(time.Duration(v.AsFloat64() * float64(time.Second))).String()
			}
			fmt.Fprintf(&b, "  %s=%s", a.label, val)
		}
	}
	return b.String()
}

// round shortens d for display.
func round(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
