package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// nopBackend is a non-nil lock.Backend that is never called.
type nopBackend struct{ lock.Backend }

// Capabilities are those of a backend with striped fences, so that replay
// accepts it (the embedded Backend is nil).
func (nopBackend) Capabilities() lock.Capabilities { return lock.Capabilities{Backend: "nop"} }

func newGuard(t *testing.T, c Config) *Guard {
	t.Helper()
	g, err := newFrom(nopBackend{}, c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestNewConfig(t *testing.T) {
	tests := []struct {
		desc    string
		b       lock.Backend
		c       Config
		wantErr bool
	}{
		{desc: "defaults", b: nopBackend{}},
		{desc: "nil backend", wantErr: true},
		{desc: "negative TTL", b: nopBackend{}, c: Config{TTL: -time.Second}, wantErr: true},
		{desc: "TTL under a millisecond", b: nopBackend{}, c: Config{TTL: time.Microsecond}, wantErr: true},
		{desc: "negative wait", b: nopBackend{}, c: Config{Wait: -time.Second}, wantErr: true},
		{desc: "bad lock option", b: nopBackend{}, c: Config{LockOptions: []lock.Option{lock.WithReleaseTimeout(0)}}, wantErr: true},
		{desc: "prefix not UTF-8", b: nopBackend{}, c: Config{Prefix: "\xff"}, wantErr: true},
		{desc: "prefix leaves no room", b: nopBackend{}, c: Config{Prefix: strings.Repeat("p", lockdriver.MaxKeyBytes)}, wantErr: true},
		{desc: "longest prefix", b: nopBackend{}, c: Config{Prefix: strings.Repeat("p", lockdriver.MaxKeyBytes-1)}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g, err := newFrom(tt.b, tt.c)
			if tt.wantErr {
				if lock.CodeOf(err) != lock.CodeInvalidArgument || g != nil {
					t.Errorf("New = %v, %v; want nil and an InvalidArgument error", g, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got, want := g.TTL(), guard.DefaultTTL; tt.c.TTL == 0 && got != want {
				t.Errorf("TTL() = %v, want %v", got, want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	errExtract := errors.New("no tenant")
	tests := []struct {
		desc       string
		prefix     string
		raw        string
		extractErr error
		want       string // "" means an InvalidArgument error
	}{
		{desc: "plain", raw: "order-1", want: "::order-1"},
		{desc: "prefixed", prefix: "orders:", raw: "1", want: "orders:::1"},
		{desc: "NFC kept", prefix: "p:", raw: "caf\u00e9", want: "p:::caf\u00e9"},
		{desc: "not NFC: encoded byte for byte", prefix: "p:", raw: "cafe\u0301", want: `p:::\=Y2FmZcyB`},
		{desc: "exactly 512 bytes", prefix: "p:", raw: strings.Repeat("k", 508), want: "p:::" + strings.Repeat("k", 508)},
		{desc: "513 bytes with the prefix", prefix: "p:", raw: strings.Repeat("k", 509)},
		{desc: "empty", prefix: "p:", raw: ""},
		{desc: "invalid UTF-8", raw: "a\xffb"},
		{desc: "extractor error", raw: "x", extractErr: errExtract},
		{desc: "extractor InvalidArgument", extractErr: guard.Missing("header", "X")},
		{desc: "whitespace is kept", raw: " k ", want: ":: k "},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g := newGuard(t, Config{Prefix: tt.prefix, NoRoute: true})
			got, err := g.Key("POST /", "", tt.raw, tt.extractErr)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Errorf("Key = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if lock.CodeOf(err) != lock.CodeInvalidArgument || got != "" {
				t.Errorf("Key = %q, %v; want an InvalidArgument error", got, err)
			}
			if tt.extractErr != nil && !errors.Is(err, tt.extractErr) {
				t.Errorf("Key error %v does not wrap the extractor's %v", err, tt.extractErr)
			}
			if tt.raw != "" && strings.Contains(err.Error(), tt.raw) {
				t.Errorf("error %q contains the key", err)
			}
		})
	}
}

func FuzzKey(f *testing.F) {
	f.Add("", "order-1")
	f.Add("orders:", "cafe\u0301")
	f.Add("\u0301", "\u0301")
	f.Add("p", strings.Repeat("\u00e9", 300))
	f.Add("", "a\xff")
	f.Fuzz(func(t *testing.T, prefix, raw string) {
		g, err := newFrom(nopBackend{}, Config{Prefix: prefix})
		if err != nil {
			return
		}
		key, err := g.Key(Route("POST", "/orders/{id}", ""), "", raw, nil)
		if err != nil {
			if lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Fatalf("Key(%q) error %v is not InvalidArgument", raw, err)
			}
			return
		}
		if key == "" || len(key) > lockdriver.MaxKeyBytes || !utf8.ValidString(key) {
			t.Fatalf("Key(%q) = %q: empty, too long or not UTF-8", raw, key)
		}
		if again, err := lockdriver.NormalizeKey(key); err != nil || again != key {
			t.Fatalf("Key(%q) = %q is not normalised: %q, %v", raw, key, again, err)
		}
	})
}

func TestCompose(t *testing.T) {
	part := func(s string, err error) func(string) (string, error) {
		return func(string) (string, error) { return s, err }
	}
	errPart := errors.New("part failed")
	tests := []struct {
		desc    string
		fns     []func(string) (string, error)
		want    string
		wantErr error // nil with want "" means any InvalidArgument error
	}{
		{desc: "one", fns: []func(string) (string, error){part("a", nil)}, want: "a"},
		{desc: "three", fns: []func(string) (string, error){part("t1", nil), part("u:2", nil), part("k", nil)}, want: `t1:u\:2:k`},
		{desc: "none"},
		{desc: "empty part", fns: []func(string) (string, error){part("a", nil), part("", nil)}},
		{desc: "nil part", fns: []func(string) (string, error){part("a", nil), nil}},
		{desc: "failing part", fns: []func(string) (string, error){part("a", nil), part("", errPart)}, wantErr: errPart},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := guard.Compose(tt.fns...)("req")
			switch {
			case tt.want != "":
				if err != nil || got != tt.want {
					t.Errorf("guard.Compose = %q, %v; want %q", got, err, tt.want)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("guard.Compose error = %v, want %v", err, tt.wantErr)
				}
			case lock.CodeOf(err) != lock.CodeInvalidArgument:
				t.Errorf("guard.Compose = %q, %v; want an InvalidArgument error", got, err)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	locked := func(in time.Duration) error { return &lock.LockedError{ExpiresAt: now.Add(in)} }
	tests := []struct {
		desc string
		err  error
		ttl  time.Duration
		est  time.Duration // the route's average hold time; 0 means none
		want time.Duration
	}{
		{desc: "rounds up", err: locked(2200 * time.Millisecond), ttl: 30 * time.Second, want: 3 * time.Second},
		{desc: "whole seconds stay", err: locked(4 * time.Second), ttl: 30 * time.Second, want: 4 * time.Second},
		{desc: "under a second is one", err: locked(time.Millisecond), ttl: 30 * time.Second, want: time.Second},
		{desc: "already past is one", err: locked(-time.Second), ttl: 30 * time.Second, want: time.Second},
		{desc: "unknown expiry, nothing measured: the cap", err: &lock.LockedError{}, ttl: 30 * time.Second, want: unmeasuredRetryAfter},
		{desc: "unknown expiry, measured: the hold time", err: lock.ErrLocked, ttl: 30 * time.Second, est: 1500 * time.Millisecond, want: 2 * time.Second},
		{desc: "after a wait", err: &lock.Error{Code: lock.CodeAcquisitionTimeout, Err: locked(7 * time.Second)}, ttl: 20 * time.Second, want: 7 * time.Second},
		{desc: "live holder, nothing measured: the cap", err: locked(29 * time.Second), ttl: 30 * time.Second, want: unmeasuredRetryAfter},
		{desc: "live holder just before its extension, nothing measured", err: locked(20 * time.Second), ttl: 30 * time.Second, want: unmeasuredRetryAfter},
		{desc: "dead holder: its time left, not the short holds", err: locked(12 * time.Second), ttl: 30 * time.Second, est: 35 * time.Millisecond, want: 12 * time.Second},
		{desc: "dead holder, nothing measured: its time left", err: locked(8500 * time.Millisecond), ttl: 30 * time.Second, want: 9 * time.Second},
		{desc: "capped by the hold time", err: locked(30 * time.Second), ttl: 30 * time.Second, est: 2500 * time.Millisecond, want: 3 * time.Second},
		{desc: "short holds: one second", err: locked(30 * time.Second), ttl: 30 * time.Second, est: 35 * time.Millisecond, want: time.Second},
		{desc: "hold time over the lease left", err: locked(4 * time.Second), ttl: 30 * time.Second, est: 20 * time.Second, want: 4 * time.Second},
		{desc: "hold time caps the TTL", err: lock.ErrLocked, ttl: 30 * time.Second, est: 5 * time.Second, want: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			est := tt.est
			if est == 0 {
				est = -1
			}
			if got := retryAfter(tt.err, tt.ttl, est, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWriteResponses(t *testing.T) {
	tests := []struct {
		desc       string
		write      func(http.ResponseWriter)
		wantStatus int
		wantType   string
		wantRetry  string
	}{
		{"busy", func(w http.ResponseWriter) { WriteBusy(context.Background(), w, 3*time.Second, &lock.LockedError{}) }, http.StatusConflict, guard.TypeBusy, "3"},
		{"busy under a second", func(w http.ResponseWriter) { WriteBusy(context.Background(), w, 0, lock.ErrLocked) }, http.StatusConflict, guard.TypeBusy, "1"},
		{"limit reached", func(w http.ResponseWriter) {
			WriteBusy(context.Background(), w, 2*time.Second, limited(&lock.LockedError{}))
		}, http.StatusTooManyRequests, guard.TypeLimitReached, "2"},
		{"limit reached after a wait", func(w http.ResponseWriter) {
			WriteBusy(context.Background(), w, 0, limited(&lock.Error{Code: lock.CodeAcquisitionTimeout, Err: &lock.LockedError{}}))
		}, http.StatusTooManyRequests, guard.TypeLimitReached, "1"},
		{"limit on a backend without limits", func(w http.ResponseWriter) {
			WriteError(context.Background(), w, &lock.Error{Code: lock.CodeInvalidArgument, Op: "acquire", Err: errors.ErrUnsupported})
		}, http.StatusInternalServerError, guard.TypeMisconfigured, ""},
		{"key used as a lock and as a limit", func(w http.ResponseWriter) {
			WriteError(context.Background(), w, &lock.Error{Code: lock.CodeInvalidArgument, Op: "acquire", Err: lock.ErrKindMismatch})
		}, http.StatusInternalServerError, guard.TypeMisconfigured, ""},
		{"invalid key", func(w http.ResponseWriter) {
			WriteError(context.Background(), w, guard.Missing("header", "Idempotency-Key"))
		}, http.StatusBadRequest, guard.TypeInvalidKey, ""},
		{"unavailable", func(w http.ResponseWriter) {
			WriteError(context.Background(), w, &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"})
		}, http.StatusServiceUnavailable, guard.TypeUnavailable, "1"},
		{"foreign error", func(w http.ResponseWriter) { WriteError(context.Background(), w, errors.New("boom")) }, http.StatusServiceUnavailable, guard.TypeUnavailable, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.write(rec)
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Content-Type"); got != guard.ProblemContentType {
				t.Errorf("Content-Type = %q, want %q", got, guard.ProblemContentType)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.wantRetry {
				t.Errorf("Retry-After = %q, want %q", got, tt.wantRetry)
			}
			if got, want := rec.Header().Get("Content-Length"), fmt.Sprint(rec.Body.Len()); got != want {
				t.Errorf("Content-Length = %s, body has %s bytes", got, want)
			}
			var p guard.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if p.Type != tt.wantType || p.Status != tt.wantStatus || p.Title == "" || p.Detail == "" {
				t.Errorf("problem = %+v, want type %s, status %d, a title and a detail", p, tt.wantType, tt.wantStatus)
			}
		})
	}
}

// ttlBackend grants every Acquire and remembers the TTL asked for.
type ttlBackend struct {
	nopBackend
	ttl chan time.Duration
}

func (b ttlBackend) Acquire(_ context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	b.ttl <- ttl
	return lock.Lease{Key: key, ID: "id", Fence: "000000000000001", TTL: ttl, ExpiresAt: time.Now().Add(ttl)}, nil
}

func (ttlBackend) Release(context.Context, string) error { return nil }

func (ttlBackend) Extend(_ context.Context, _ string, ttl time.Duration) (time.Time, error) {
	return time.Now().Add(ttl), nil
}

// TestOwnSettingsWin: a TTL set both ways is the middleware's: there is one
// way to set it.
func TestOwnSettingsWin(t *testing.T) {
	b := ttlBackend{ttl: make(chan time.Duration, 1)}
	g, err := newFrom(b, Config{TTL: 7 * time.Second, LockOptions: []lock.Option{lock.WithTTL(time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	ran, err := g.Run(context.Background(), "k", func(context.Context) error { return nil })
	if !ran || err != nil {
		t.Fatalf("Run = %v, %v", ran, err)
	}
	if got := <-b.ttl; got != 7*time.Second {
		t.Errorf("lease TTL = %v, want the middleware's 7s", got)
	}
}

// busyBackend is a lock.Backend whose key is always held; it counts the
// attempts.
type busyBackend struct {
	nopBackend
	attempts *atomic.Int32
}

func (b busyBackend) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	b.attempts.Add(1)
	return lock.Lease{}, &lock.LockedError{}
}

// TestOwnRetryWins: with a wait, the retry schedule is the middleware's
// (until the wait ends, at most WaitMaxDelay apart), whatever
// lock.WithRetry LockOptions give.
func TestOwnRetryWins(t *testing.T) {
	b := busyBackend{attempts: new(atomic.Int32)}
	g, err := newFrom(b, Config{Wait: 300 * time.Millisecond,
		LockOptions: []lock.Option{lock.WithRetry(lock.Retry{MaxRetries: 1, BaseDelay: time.Hour})}})
	if err != nil {
		t.Fatal(err)
	}
	ran, err := g.Run(context.Background(), "k", func(context.Context) error { return nil })
	if ran || !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Run = %v, %v; want false and ErrLocked", ran, err)
	}
	// The LockOptions' schedule would make 2 attempts (one retry, clamped
	// to the wait); the middleware's makes one at least every 50ms.
	if got := b.attempts.Load(); got < 4 {
		t.Errorf("attempts = %d, want >= 4 (retried at most guard.WaitMaxDelay apart)", got)
	}
}
