package otellock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestTermTelemetry leads four terms through election.Lead on Redis, one
// ending each way (resigned, lost, Lead stopped, fn failed), and checks
// each term's span (attributes, outcome, status, the leader's work under
// it), the term counter, the leading gauge up during a term and down
// after, and that the raw identity is recorded nowhere.
func TestTermTelemetry(t *testing.T) {
	tel := newTelemetry(t)
	inner, client := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	key := uniqueKey("term")
	identity := "zq7-Secret-Node-" + lockdriver.NewLockID()[:6]
	keyHash := lockdriver.HashKey(key)
	series := "syncguard.backend=redis,syncguard.key.hash=" + keyHash
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ctx, root := tel.tp.Tracer("test").Start(ctx, "root")
	defer root.End()

	boom := errors.New("boom")
	var terms []lock.Lease
	var active []int64 // the gauge, read in each term
	fn := func(ctx context.Context, term lock.Lease) error {
		terms = append(terms, term)
		active = append(active, sums(t, tel.metrics(t)[otellock.TermActiveMetric])[series])
		_, work := tel.tp.Tracer("test").Start(ctx, "work")
		work.End()
		switch len(terms) {
		case 1:
			return nil
		case 2:
			if err := client.Del(ctx, inner.Prefix()+":"+key).Err(); err != nil {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		case 3:
			cancel()
			<-ctx.Done()
			return nil
		}
		return boom
	}
	opts := []election.Option{election.WithTTL(time.Second), election.WithHeartbeat(lock.Heartbeat{Interval: 20 * time.Millisecond})}
	if err := election.Lead(ctx, b, key, identity, fn, opts...); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead = %v, want context.Canceled", err)
	}
	if err := election.Lead(testCtx(t), b, key, identity, fn, opts...); !errors.Is(err, boom) {
		t.Fatalf("Lead = %v, want fn's error", err)
	}

	spans := tel.ended("syncguard.term")
	if len(spans) != 4 || len(terms) != 4 {
		t.Fatalf("%d term spans for %d terms, want 4 and 4", len(spans), len(terms))
	}
	works := tel.ended("work")
	want := []struct {
		outcome string
		status  codes.Code
	}{
		{otellock.OutcomeResigned, codes.Unset},
		{otellock.OutcomeLost, codes.Error},
		{otellock.OutcomeStopped, codes.Unset},
		{otellock.OutcomeError, codes.Error},
	}
	for i, s := range spans {
		l := terms[i]
		got := attrs(s.Attributes())
		wantAttrs := map[string]string{
			"syncguard.key.hash":      keyHash,
			"syncguard.fence":         string(l.Fence),
			"syncguard.lock_id.hash":  lockdriver.HashKey(l.ID),
			"syncguard.identity.hash": otellock.IdentityHash(identity),
			"syncguard.backend":       "redis",
			"syncguard.outcome":       want[i].outcome,
		}
		for k, v := range wantAttrs {
			if got[k] != v {
				t.Errorf("term %d: %s = %q, want %q", i+1, k, got[k], v)
			}
		}
		if s.Status().Code != want[i].status {
			t.Errorf("term %d: status %v %q, want %v", i+1, s.Status().Code, s.Status().Description, want[i].status)
		}
		if works[i].Parent().SpanID() != s.SpanContext().SpanID() {
			t.Errorf("term %d: the leader's work is not a child of the term span", i+1)
		}
		if i > 0 && l.Fence <= terms[i-1].Fence {
			t.Errorf("term %d: fence %s, not above %s", i+1, l.Fence, terms[i-1].Fence)
		}
		if active[i] != 1 {
			t.Errorf("term %d: %s = %d during the term, want 1", i+1, otellock.TermActiveMetric, active[i])
		}
	}
	if d := spans[1].Status().Description; !strings.Contains(d, lock.ErrLeaseLost.Error()) {
		t.Errorf("lost term: status %q, want the loss", d)
	}
	if d := spans[3].Status().Description; d != boom.Error() {
		t.Errorf("failed term: status %q, want fn's error", d)
	}
	if p := spans[0].Parent().SpanID(); p != root.SpanContext().SpanID() {
		t.Errorf("the term span's parent is %v, want Lead's caller's span", p)
	}

	m := tel.metrics(t)
	if got := sums(t, m[otellock.TermMetric])[series]; got != 4 {
		t.Errorf("%s{%s} = %d, want 4", otellock.TermMetric, series, got)
	}
	if got := sums(t, m[otellock.TermActiveMetric])[series]; got != 0 {
		t.Errorf("%s{%s} = %d after the terms, want 0", otellock.TermActiveMetric, series, got)
	}
	if u := m[otellock.TermMetric].Unit + " " + m[otellock.TermActiveMetric].Unit; u != "{term} {term}" {
		t.Errorf("units = %s, want {term} {term}", u)
	}
	durations := histCounts(t, m[otellock.TermDurationMetric])
	for _, w := range want {
		by := "syncguard.backend=redis,syncguard.key.hash=" + keyHash + ",syncguard.outcome=" + w.outcome
		if durations[by] != 1 {
			t.Errorf("%s{%s}: %d terms, want 1 (all: %v)", otellock.TermDurationMetric, by, durations[by], durations)
		}
	}

	allSpans, metrics := dump(t, tel)
	if !strings.Contains(allSpans, otellock.IdentityHash(identity)) {
		t.Fatalf("the identity's hash is not in the spans: the search below proves nothing\n%s", allSpans)
	}
	if strings.Contains(allSpans, identity) || strings.Contains(metrics, identity) {
		t.Errorf("the raw identity is recorded:\n%s\n%s", allSpans, metrics)
	}
}

// TestTermHeartbeat: the extensions of a term's lease are children of its
// term span, in its trace; and the identity's hash shows none of its
// bytes (a one-letter identity gave 00000041000000c3000001c7 with
// lockdriver.HashKey).
func TestTermHeartbeat(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	stop := errors.New("stop")
	err := election.Lead(testCtx(t), b, uniqueKey("term"), "A", func(context.Context, lock.Lease) error {
		time.Sleep(150 * time.Millisecond)
		return stop
	}, election.WithTTL(time.Second), election.WithHeartbeat(lock.Heartbeat{Interval: 20 * time.Millisecond}))
	if !errors.Is(err, stop) {
		t.Fatalf("Lead = %v, want fn's error", err)
	}
	terms, extends := tel.ended("syncguard.term"), tel.ended("syncguard.extend")
	if len(terms) != 1 || len(extends) < 2 {
		t.Fatalf("%d term spans and %d extend spans, want 1 and several", len(terms), len(extends))
	}
	for _, e := range extends {
		if e.Parent().SpanID() != terms[0].SpanContext().SpanID() || e.SpanContext().TraceID() != terms[0].SpanContext().TraceID() {
			t.Errorf("an extension's parent is %v, want the term span %v", e.Parent().SpanID(), terms[0].SpanContext().SpanID())
		}
	}
	got := attrs(terms[0].Attributes())["syncguard.identity.hash"]
	if got == "" || strings.Contains(got, "41") || got != otellock.IdentityHash("A") {
		t.Errorf("identity hash of %q = %q, want IdentityHash's, without the identity's bytes (0x41)", "A", got)
	}
}

// TestTermFiltered: a filter that drops lock.OpTerm drops the term span
// (the leader's work is then the caller's child) but not its metrics.
func TestTermFiltered(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	var seen []lock.OpKind
	b := otellock.Wrap(inner, tel.options(otellock.WithFilter(func(_ context.Context, k lock.OpKind) bool {
		if k == lock.OpTerm {
			seen = append(seen, k)
		}
		return k != lock.OpTerm
	}))...)
	key := uniqueKey("term")
	ctx, root := tel.tp.Tracer("test").Start(testCtx(t), "root")
	defer root.End()
	stop := errors.New("stop")
	err := election.Lead(ctx, b, key, "node-1", func(ctx context.Context, _ lock.Lease) error {
		_, work := tel.tp.Tracer("test").Start(ctx, "work")
		work.End()
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Lead = %v, want fn's error", err)
	}
	if n := len(tel.ended("syncguard.term")); n != 0 || len(seen) != 1 {
		t.Errorf("%d term spans, the filter asked %d times; want 0 and 1", n, len(seen))
	}
	if n := len(tel.ended("syncguard.wait")); n != 1 {
		t.Errorf("%d wait spans, want 1: the filter drops terms only", n)
	}
	if w := tel.ended("work"); len(w) != 1 || w[0].Parent().SpanID() != root.SpanContext().SpanID() {
		t.Errorf("the leader's work is not the caller's child: %v", spanParents(w))
	}
	series := "syncguard.backend=redis,syncguard.key.hash=" + lockdriver.HashKey(key)
	if got := sums(t, tel.metrics(t)[otellock.TermMetric])[series]; got != 1 {
		t.Errorf("%s{%s} = %d, want 1", otellock.TermMetric, series, got)
	}
}

// spanParents lists the parents' span ids of spans, for messages.
func spanParents(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Parent().SpanID().String())
	}
	return out
}
