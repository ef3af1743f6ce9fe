package otellock_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// receiver is an OTLP/HTTP trace endpoint that keeps what it receives.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	scope map[*tracepb.Span]string // span -> instrumentation scope name
	errs  []error
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusBadRequest)
		return
	}
	body := io.Reader(r.Body)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			rc.fail(w, err)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		rc.fail(w, err)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		rc.fail(w, err)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				rc.spans = append(rc.spans, s)
				rc.scope[s] = ss.GetScope().GetName()
			}
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (rc *receiver) fail(w http.ResponseWriter, err error) {
	rc.mu.Lock()
	rc.errs = append(rc.errs, err)
	rc.mu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// TestOTLPExport sends the lock spans through the real OTLP/HTTP exporter
// to an in-process receiver, which decodes the protobuf export request
// and finds them with their attributes.
func TestOTLPExport(t *testing.T) {
	rc := &receiver{scope: map[*tracepb.Span]string{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)

	ctx := testCtx(t)
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"),
		otlptracehttp.WithInsecure(), otlptracehttp.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	inner, _ := newRedis(t)
	b := otellock.Wrap(inner, otellock.WithTracerProvider(tp), otellock.WithMeterProvider(noop.NewMeterProvider()))

	key := uniqueKey("export")
	var lease lock.Lease
	err = lock.Do(ctx, b, key, func(_ context.Context, l lock.Lease) error {
		lease = l
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.errs) > 0 {
		t.Fatalf("receiver errors: %v", rc.errs)
	}
	got := map[string]*tracepb.Span{}
	for _, s := range rc.spans {
		got[s.GetName()] = s
		if rc.scope[s] != otellock.ScopeName {
			t.Errorf("span %s: scope %q, want %q", s.GetName(), rc.scope[s], otellock.ScopeName)
		}
	}
	wantAttrs := map[string]map[string]string{
		"syncguard.wait": {"syncguard.key.hash": lockdriver.HashKey(key), "syncguard.outcome": "acquired",
			"syncguard.fence": string(lease.Fence), "syncguard.attempts": "1"},
		"syncguard.acquire": {"syncguard.key.hash": lockdriver.HashKey(key), "syncguard.outcome": "acquired",
			"syncguard.fence": string(lease.Fence), "syncguard.lock_id.hash": lockdriver.HashKey(lease.ID), "syncguard.ttl": "30"},
		"syncguard.release": {"syncguard.lock_id.hash": lockdriver.HashKey(lease.ID), "syncguard.outcome": "released",
			"syncguard.backend": "redis"},
	}
	for name, want := range wantAttrs {
		s, ok := got[name]
		if !ok {
			t.Errorf("span %s not received (got %d spans)", name, len(rc.spans))
			continue
		}
		if s.GetKind() != tracepb.Span_SPAN_KIND_INTERNAL {
			t.Errorf("%s: kind %v, want internal", name, s.GetKind())
		}
		a := pbAttrs(s)
		for k, v := range want {
			if a[k] != v {
				t.Errorf("%s: attribute %s = %q, want %q", name, k, a[k], v)
			}
		}
	}
	if w, a := got["syncguard.wait"], got["syncguard.acquire"]; w != nil && a != nil && !bytes.Equal(a.GetParentSpanId(), w.GetSpanId()) {
		t.Errorf("acquire's parent %x, want the wait span %x", a.GetParentSpanId(), w.GetSpanId())
	}
}

// pbAttrs renders a protobuf span's attributes like attribute.Value.String.
func pbAttrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.GetAttributes() {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.GetKey()] = strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
		}
	}
	return out
}
