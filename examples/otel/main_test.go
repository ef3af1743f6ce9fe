package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
)

// TestDemo runs the example on miniredis with the stdout exporter: the
// request's tree is request -> syncguard.wait -> syncguard.acquire, with
// at least one attempt that found the order locked.
func TestDemo(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	root, err := run(ctx, &out)
	if err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, &out)
	}
	checkTree(t, root)

	got := out.String()
	if !strings.Contains(got, `"Name": "syncguard.wait"`) {
		t.Errorf("the stdout exporter's JSON lacks the wait span:\n%s", got)
	}
	tree := got[strings.Index(got, "The request's trace"):]
	for _, want := range []string{
		"\nPOST /orders/{id}/pay  ",
		"\n├─ syncguard.wait  ",
		"\n│  ├─ syncguard.acquire  ",
		"outcome=locked",
		"\n│  │  └─ evalsha  ",
		"\n│  └─ syncguard.acquire  ",
		"outcome=acquired",
		"\n└─ syncguard.release  ",
		// The invoice request's trace: its enqueue, the task's delivery
		// under it, and the delivery's lock and work under that.
		"\nPOST /invoices/{id}  ",
		"\n└─ send otel-example-",
		"\n   └─ process otel-example-",
		"task.outcome=ran",
		"\n      ├─ syncguard.wait  ",
		"\n      ├─ send invoice email  ",
		"\n      └─ syncguard.release  ",
	} {
		if !strings.Contains(tree, want) {
			t.Errorf("the printed tree lacks %q:\n%s", want, tree)
		}
	}
}

// checkTree checks request -> syncguard.wait -> syncguard.acquire (some
// locked, the last acquired) -> evalsha (none under a hand-off).
func checkTree(t *testing.T, root *node) {
	t.Helper()
	if root == nil || root.span.Name() != "POST /orders/{id}/pay" {
		t.Fatalf("root: got %v, want the request span", root)
	}
	var wait *node
	for _, c := range root.children {
		if c.span.Name() == "syncguard.wait" {
			wait = c
		}
	}
	if wait == nil {
		t.Fatal("no syncguard.wait span under the request")
	}
	if len(wait.children) < 2 {
		t.Fatalf("acquire spans under the wait: got %d, want at least 2 (the job holds the order %v)", len(wait.children), hold)
	}
	// The last acquire took the lock: an attempt, or (usually) the
	// job's release handed the lock over to the queued request, which
	// shows as an acquire span with handoff=true and no Redis call.
	last := summary(wait.children[len(wait.children)-1].span.Attributes())
	handedOver := strings.Contains(last, "handoff=true")
	if !strings.Contains(summary(wait.span.Attributes()), "outcome=acquired") {
		t.Errorf("wait: got%s, want outcome=acquired", summary(wait.span.Attributes()))
	}
	for i, a := range wait.children {
		if a.span.Name() != "syncguard.acquire" {
			t.Errorf("child %d of the wait: got %s, want syncguard.acquire", i, a.span.Name())
		}
		want, calls := "outcome=locked", 1
		if i == len(wait.children)-1 {
			want = "outcome=acquired  fence="
			if handedOver {
				calls = 0
			}
		}
		if got := summary(a.span.Attributes()); !strings.Contains(got, want) {
			t.Errorf("acquire %d: got%s, want %s", i, got, want)
		}
		if len(a.children) != calls || calls == 1 && a.children[0].span.Name() != "evalsha" {
			t.Errorf("acquire %d: got %d children, want %d evalsha", i, len(a.children), calls)
		}
	}
}

// run runs the example on an embedded miniredis and returns the request's
// span tree.
func run(ctx context.Context, w io.Writer) (*node, error) {
	var root *node
	err := demorun.Run(ctx, w, "", func(ctx context.Context, env *demorun.Env) error {
		var err error
		root, err = tracedRequest(ctx, env)
		return err
	})
	return root, err
}

// TestDemoOTLP runs the example with OTEL_EXPORTER_OTLP_ENDPOINT set: the
// spans go to the OTLP/HTTP endpoint instead of stdout.
func TestDemoOTLP(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	t.Setenv("REDIS_URL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	root, err := run(ctx, &out)
	if err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, &out)
	}
	checkTree(t, root)
	if posts.Load() == 0 {
		t.Error("no export request reached the OTLP endpoint")
	}
	if strings.Contains(out.String(), `"Name":`) {
		t.Errorf("spans went to stdout too:\n%s", &out)
	}
}

// TestServiceNameFromEnv: the standard OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES name the service; "orders" without them.
func TestServiceNameFromEnv(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	for _, tt := range []struct {
		name, attrs, want string
	}{
		{"", "", "orders"},
		{"billing", "", "billing"},
		{"", "service.name=ledger,deployment.environment=demo", "ledger"},
	} {
		t.Setenv("OTEL_SERVICE_NAME", tt.name)
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", tt.attrs)
		tp, spans, err := newTracerProvider(context.Background(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		_, span := tp.Tracer("test").Start(context.Background(), "x")
		span.End()
		got, _ := spans.Ended()[0].Resource().Set().Value("service.name")
		if got.AsString() != tt.want {
			t.Errorf("OTEL_SERVICE_NAME=%q OTEL_RESOURCE_ATTRIBUTES=%q: service.name %q, want %q", tt.name, tt.attrs, got.AsString(), tt.want)
		}
		_ = tp.Shutdown(context.Background())
	}
}
