package otellock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// plainBackend hides everything but lock.Backend.
type plainBackend struct{ lock.Backend }

// idOnly hides lock.Recorder.
type idOnly struct{ lock.IDBackend }

// recorderOnly hides lock.IDBackend.
type recorderOnly struct{ lock.Recorder }

// TestWrapKeepsCapabilities: the wrapper is a lock.IDBackend and a
// lock.Recorder exactly when the wrapped backend is, so a type assertion
// on it tells the truth (lock.Acquire queues and limits, and a
// record-replaying middleware is accepted, exactly as on the bare
// backend), and the extensions it has work through it.
func TestWrapKeepsCapabilities(t *testing.T) {
	inner, _ := newRedis(t)
	tests := []struct {
		desc         string
		b            lock.Backend
		id, recorder bool
	}{
		{desc: "redisbackend", b: inner, id: true, recorder: true},
		{desc: "IDBackend only", b: idOnly{inner}, id: true},
		{desc: "Recorder only", b: recorderOnly{inner}, recorder: true},
		{desc: "core Backend only", b: plainBackend{inner}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			tel := newTelemetry(t)
			w := otellock.Wrap(tt.b, tel.options()...)
			idb, id := w.(lock.IDBackend)
			rec, recorder := w.(lock.Recorder)
			if id != tt.id || recorder != tt.recorder {
				t.Fatalf("IDBackend %v, Recorder %v; want %v, %v", id, recorder, tt.id, tt.recorder)
			}
			ctx := testCtx(t)
			key := uniqueKey("caps")
			var l lock.Lease
			var err error
			if id {
				lid, err := idb.NewLockID(key)
				if err != nil {
					t.Fatal(err)
				}
				l, err = idb.AcquireID(ctx, key, lid, time.Minute)
				if err != nil || l.ID != lid {
					t.Fatalf("AcquireID = %+v, %v; want a lease with id %s", l, err, lid)
				}
			} else if l, err = w.Acquire(ctx, key, time.Minute); err != nil {
				t.Fatal(err)
			}
			if recorder {
				if err := rec.ReleaseDone(ctx, l, time.Minute); err != nil {
					t.Fatal(err)
				}
				if done, err := rec.IsDone(ctx, key); err != nil || !done {
					t.Errorf("IsDone = %v, %v; want true", done, err)
				}
			} else if err := w.Release(ctx, l.ID); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range tel.spans.Ended() {
				names = append(names, s.Name())
			}
			want := "syncguard.acquire syncguard.release"
			if recorder {
				want = "syncguard.acquire syncguard.release_done syncguard.is_done"
			}
			if got := strings.Join(names, " "); got != want {
				t.Errorf("spans %q, want %q", got, want)
			}
		})
	}
}

// TestNilContext: a call with a nil context goes to the backend, which
// rejects it, without a span, a measurement or a panic.
func TestNilContext(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	w := otellock.Wrap(inner, tel.options()...)
	idb := w.(lock.IDBackend)
	rec := w.(lock.Recorder)
	var nilCtx context.Context
	id := lockdriver.NewLockID()
	l := lock.Lease{Key: "k", ID: id, TTL: time.Second}
	calls := []struct {
		desc string
		call func() error
	}{
		{"Acquire", func() error { _, err := w.Acquire(nilCtx, "k", time.Second); return err }},
		{"AcquireID", func() error { _, err := idb.AcquireID(nilCtx, "k", id, time.Second); return err }},
		{"AcquireSlot", func() error { _, err := idb.AcquireSlot(nilCtx, "k", id, 2, time.Second); return err }},
		{"Release", func() error { return w.Release(nilCtx, id) }},
		{"Extend", func() error { _, err := w.Extend(nilCtx, id, time.Second); return err }},
		{"ExtendBatch", func() error {
			return idb.ExtendBatch(nilCtx, []lock.Lease{{ID: id, TTL: time.Second}})[0].Err
		}},
		{"IsLocked", func() error { _, err := w.IsLocked(nilCtx, "k"); return err }},
		{"LookupKey", func() error { _, err := w.LookupKey(nilCtx, "k"); return err }},
		{"LookupID", func() error { _, err := w.LookupID(nilCtx, id); return err }},
		{"LookupLimit", func() error { _, err := idb.LookupLimit(nilCtx, "k"); return err }},
		{"ReleaseDone", func() error { return rec.ReleaseDone(nilCtx, l, time.Second) }},
		{"ReleaseRecord", func() error { return rec.ReleaseRecord(nilCtx, l, []byte("r"), time.Second) }},
		{"IsDone", func() error { _, err := rec.IsDone(nilCtx, "k"); return err }},
		{"Record", func() error { _, _, err := rec.Record(nilCtx, "k"); return err }},
		{"lock.Acquire", func() error { _, err := lock.Acquire(nilCtx, w, "k"); return err }},
	}
	for _, c := range calls {
		if err := c.call(); lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("%s with a nil context: got %v, want InvalidArgument", c.desc, err)
		}
	}
	if n := len(tel.spans.Ended()) + len(tel.spans.Started()); n != 0 {
		t.Errorf("%d spans for calls with a nil context, want none", n)
	}
	for name, m := range tel.metrics(t) {
		t.Errorf("metric %s recorded for calls with a nil context: %+v", name, m.Data)
	}
}
