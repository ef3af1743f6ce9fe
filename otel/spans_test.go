package otellock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestOperationSpans runs every Backend method through the wrapper, one
// after another on one key, and checks the span each call leaves: name,
// kind, parent, attributes and status.
func TestOperationSpans(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	parentCtx, parent := tel.tp.Tracer("test").Start(testCtx(t), "parent")
	defer parent.End()

	key := uniqueKey("order")
	keyHash := lockdriver.HashKey(key)
	var l lock.Lease // the lease, once acquired
	idHash := func() string { return lockdriver.HashKey(l.ID) }

	tests := []struct {
		desc      string
		call      func(ctx context.Context) error
		wantName  string
		wantAttrs func() map[string]string
		wantErr   func(error) bool // nil: the call must succeed
		wantCode  lock.Code        // set for a system failure: status Error
	}{
		{
			desc: "acquire a free key",
			call: func(ctx context.Context) (err error) {
				l, err = b.Acquire(ctx, key, 10*time.Second)
				return err
			},
			wantName: "syncguard.acquire",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.key.hash": keyHash, "syncguard.ttl": "10",
					"syncguard.fence": string(l.Fence), "syncguard.lock_id.hash": idHash(),
					"syncguard.outcome": "acquired", "syncguard.backend": "redis"}
			},
		},
		{
			desc: "acquire a held key: contention is an outcome",
			call: func(ctx context.Context) error {
				_, err := b.Acquire(ctx, key, 10*time.Second)
				return err
			},
			wantName: "syncguard.acquire",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.key.hash": keyHash, "syncguard.ttl": "10",
					"syncguard.outcome": "locked", "syncguard.backend": "redis"}
			},
			wantErr: func(err error) bool { return errors.Is(err, lock.ErrLocked) },
		},
		{
			desc: "is_locked on a held key",
			call: func(ctx context.Context) error {
				ok, err := b.IsLocked(ctx, key)
				if err == nil && !ok {
					return errors.New("IsLocked = false")
				}
				return err
			},
			wantName: "syncguard.is_locked",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.key.hash": keyHash, "syncguard.outcome": "held", "syncguard.backend": "redis"}
			},
		},
		{
			desc: "lookup by key",
			call: func(ctx context.Context) error {
				_, err := b.LookupKey(ctx, key)
				return err
			},
			wantName: "syncguard.lookup_key",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.key.hash": keyHash, "syncguard.lookup.by": "key",
					"syncguard.fence": string(l.Fence), "syncguard.outcome": "found", "syncguard.backend": "redis"}
			},
		},
		{
			desc: "lookup by id",
			call: func(ctx context.Context) error {
				_, err := b.LookupID(ctx, l.ID)
				return err
			},
			wantName: "syncguard.lookup_id",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.lock_id.hash": idHash(), "syncguard.key.hash": keyHash,
					"syncguard.lookup.by": "id", "syncguard.fence": string(l.Fence),
					"syncguard.outcome": "found", "syncguard.backend": "redis"}
			},
		},
		{
			desc: "extend",
			call: func(ctx context.Context) error {
				_, err := b.Extend(ctx, l.ID, 20*time.Second)
				return err
			},
			wantName: "syncguard.extend",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.lock_id.hash": idHash(), "syncguard.ttl": "20",
					"syncguard.outcome": "extended", "syncguard.backend": "redis"}
			},
		},
		{
			desc:     "release",
			call:     func(ctx context.Context) error { return b.Release(ctx, l.ID) },
			wantName: "syncguard.release",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.lock_id.hash": idHash(), "syncguard.outcome": "released", "syncguard.backend": "redis"}
			},
		},
		{
			desc:     "release again: not held is an outcome",
			call:     func(ctx context.Context) error { return b.Release(ctx, l.ID) },
			wantName: "syncguard.release",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.lock_id.hash": idHash(), "syncguard.outcome": "not_found", "syncguard.backend": "redis"}
			},
			wantErr: func(err error) bool { return errors.Is(err, lock.ErrNotHeld) },
		},
		{
			desc: "extend a released lease",
			call: func(ctx context.Context) error {
				_, err := b.Extend(ctx, l.ID, time.Second)
				return err
			},
			wantName: "syncguard.extend",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.lock_id.hash": idHash(), "syncguard.ttl": "1",
					"syncguard.outcome": "not_found", "syncguard.backend": "redis"}
			},
			wantErr: func(err error) bool { return errors.Is(err, lock.ErrNotHeld) },
		},
		{
			desc: "is_locked on a free key",
			call: func(ctx context.Context) error {
				ok, err := b.IsLocked(ctx, key)
				if err == nil && ok {
					return errors.New("IsLocked = true")
				}
				return err
			},
			wantName: "syncguard.is_locked",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.key.hash": keyHash, "syncguard.outcome": "free", "syncguard.backend": "redis"}
			},
		},
		{
			desc: "lookup a free key",
			call: func(ctx context.Context) error {
				_, err := b.LookupKey(ctx, key)
				return err
			},
			wantName: "syncguard.lookup_key",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.key.hash": keyHash, "syncguard.lookup.by": "key",
					"syncguard.outcome": "not_found", "syncguard.backend": "redis"}
			},
		},
		{
			desc: "acquire with an invalid key: a failure",
			call: func(ctx context.Context) error {
				_, err := b.Acquire(ctx, "", time.Second)
				return err
			},
			wantName: "syncguard.acquire",
			wantAttrs: func() map[string]string {
				return map[string]string{"syncguard.key.hash": lockdriver.HashKey(""), "syncguard.ttl": "1",
					"syncguard.outcome": "error", "error.type": "InvalidArgument", "syncguard.backend": "redis"}
			},
			wantErr:  func(err error) bool { return lock.CodeOf(err) == lock.CodeInvalidArgument },
			wantCode: lock.CodeInvalidArgument,
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := tt.call(parentCtx)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("call: %v, want nil", err)
			}
			if tt.wantErr != nil && !tt.wantErr(err) {
				t.Fatalf("call: got error %v, not the one wanted", err)
			}
			s := tel.last(t)
			if s.Name() != tt.wantName {
				t.Fatalf("span name: got %q, want %q", s.Name(), tt.wantName)
			}
			if s.SpanKind() != trace.SpanKindInternal {
				t.Errorf("span kind: got %v, want internal", s.SpanKind())
			}
			if got, want := s.Parent().SpanID(), parent.SpanContext().SpanID(); got != want {
				t.Errorf("parent span: got %v, want the caller's %v", got, want)
			}
			if got := s.InstrumentationScope().Name; got != otellock.ScopeName {
				t.Errorf("scope: got %q, want %q", got, otellock.ScopeName)
			}
			got := attrs(s.Attributes())
			want := tt.wantAttrs()
			for k, v := range want {
				if got[k] != v {
					t.Errorf("attribute %s: got %q, want %q", k, got[k], v)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("unexpected attribute %s=%q", k, got[k])
				}
			}
			checkStatus(t, s, tt.wantCode)
		})
	}
}

// checkStatus checks that span s failed with code, or, for code "", that
// its status is Unset and it recorded no error.
func checkStatus(t *testing.T, s sdktrace.ReadOnlySpan, code lock.Code) {
	t.Helper()
	var exceptions int
	for _, e := range s.Events() {
		if e.Name == "exception" {
			exceptions++
		}
	}
	if code == "" {
		if s.Status().Code != codes.Unset || exceptions != 0 {
			t.Errorf("status: got %v %q with %d exception events, want Unset and none", s.Status().Code, s.Status().Description, exceptions)
		}
		return
	}
	if s.Status().Code != codes.Error || s.Status().Description == "" {
		t.Errorf("status: got %v %q, want Error with a description", s.Status().Code, s.Status().Description)
	}
	if got := attrs(s.Attributes())["error.type"]; got != string(code) {
		t.Errorf("error.type: got %q, want %q", got, code)
	}
	if exceptions != 1 {
		t.Errorf("exception events: got %d, want 1", exceptions)
	}
}

// TestSystemErrors checks that failures of the store and a cancelled
// context set status Error and error.type, on the span and on the
// duration metric.
func TestSystemErrors(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	inner, err := redisbackend.New(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Ping(testCtx(t)).Err(); err != nil {
		t.Fatal(err)
	}

	t.Run("cancelled context", func(t *testing.T) {
		tel := newTelemetry(t)
		b := otellock.Wrap(inner, tel.options()...)
		ctx, cancel := context.WithCancel(testCtx(t))
		cancel()
		_, err := b.Acquire(ctx, "k", time.Second)
		if lock.CodeOf(err) != lock.CodeAborted {
			t.Fatalf("Acquire: %v, want code Aborted", err)
		}
		checkStatus(t, tel.last(t), lock.CodeAborted)
		checkErrorMetric(t, tel, "acquire", lock.CodeAborted)
	})

	t.Run("stopped server", func(t *testing.T) {
		tel := newTelemetry(t)
		b := otellock.Wrap(inner, tel.options()...)
		srv.Stop(t)
		_, err := b.Acquire(testCtx(t), "k", time.Second)
		code := lock.CodeOf(err)
		if code == "" || errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Acquire on a stopped server: %v, want a system failure", err)
		}
		checkStatus(t, tel.last(t), code)
		checkErrorMetric(t, tel, "acquire", code)

		err = b.Release(testCtx(t), lockdriver.NewLockID())
		if lock.CodeOf(err) != code {
			t.Fatalf("Release on a stopped server: %v, want code %s", err, code)
		}
		checkStatus(t, tel.last(t), code)
	})
}

// checkErrorMetric checks that one failed op was measured with error.type.
func checkErrorMetric(t *testing.T, tel *telemetry, op string, code lock.Code) {
	t.Helper()
	m, ok := tel.metrics(t)[otellock.OperationDurationMetric]
	if !ok {
		t.Fatalf("no %s metric", otellock.OperationDurationMetric)
	}
	want := "error.type=" + string(code) + ",syncguard.backend=redis,syncguard.operation=" + op + ",syncguard.outcome=error"
	if got := histCounts(t, m)[want]; got != 1 {
		t.Errorf("%s{%s}: got count %d, want 1 (all: %v)", m.Name, want, got, histCounts(t, m))
	}
}
