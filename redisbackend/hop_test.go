package redisbackend

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock"
)

// TestClientBound: the bound of go-redis's defaults and of explicit
// options, and none without timeouts.
func TestClientBound(t *testing.T) {
	tests := []struct {
		desc string
		o    clientOptions
		want time.Duration
	}{
		{"three retries", clientOptions{retries: 3, read: 3 * time.Second, write: 3 * time.Second,
			backoff: 512 * time.Millisecond, dial: 5 * time.Second, pool: 4 * time.Second}, 4*(5+3+3)*time.Second + 3*512*time.Millisecond},
		{"short timeouts, one retry", clientOptions{retries: 1, read: 200 * time.Millisecond, write: 100 * time.Millisecond,
			backoff: 50 * time.Millisecond, dial: 300 * time.Millisecond, pool: 100 * time.Millisecond}, 2*600*time.Millisecond + 50*time.Millisecond},
		{"no read timeout (0 once go-redis filled the options in)", clientOptions{retries: 3, write: time.Second}, unbounded},
		{"no deadlines at all (-2)", clientOptions{retries: 3, read: -2, write: -2}, unbounded},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := clientBound(tt.o); got != tt.want {
				t.Errorf("clientBound = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSendsDirect: the hop rule. A call goes out from its caller's
// goroutine when its context has no deadline, or a deadline no earlier
// than the client's own bound, or the client ends calls at their
// deadline; otherwise it waits on a goroutine of its own.
func TestSendsDirect(t *testing.T) {
	defClient := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	def, _ := directClient(defClient)
	// go-redis v9.23's defaults: 5 s dial, 6 s pool, 5 s read and write,
	// 3 retries, 1 s backoff: 4 tries of 16 s and 3 backoffs.
	if o, _ := optionsOf(defClient); clientBound(o) != 67*time.Second {
		t.Errorf("bound of go-redis's defaults = %v, want 67s", clientBound(o))
	}
	timeouts, _ := directClient(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}))
	noTimeouts, _ := directClient(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ReadTimeout: -1}))
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	soon, cancelSoon := context.WithTimeout(context.Background(), 5*time.Second) // asynq-style
	defer cancelSoon()
	late, cancelLate := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLate()
	tests := []struct {
		desc   string
		ctx    context.Context
		direct processor
		want   bool
	}{
		{"Background, default client", context.Background(), def, true},
		{"Background, no direct sender", context.Background(), nil, true},
		{"cancellable without deadline (net/http), default client", cancellable, def, true},
		{"cancellable without deadline, no direct sender", cancellable, nil, false},
		{"5 s deadline, default client (bound 67 s)", soon, def, false},
		{"1 h deadline, default client", late, def, true},
		{"5 s deadline, ContextTimeoutEnabled", soon, timeouts, true},
		{"1 h deadline, client without read timeout", late, noTimeouts, false},
		{"cancellable, client without read timeout", cancellable, noTimeouts, true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := sendsDirect(tt.ctx, tt.direct); got != tt.want {
				t.Errorf("sendsDirect = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestStalledServerEveryContextKind: with Redis stopped (SIGSTOP), a call
// ends by its context's deadline or by the client's own bound, whichever
// comes first, for each kind of context users have: Background (jobs),
// cancellable without a deadline (net/http), a deadline before the
// client's bound (the call waits on a goroutine and returns at the
// deadline) and one after it (the call goes out from the caller's
// goroutine and go-redis ends it first). The client's timeouts are short
// (and one retry, not three) so that its bound is about 1.3 s, not
// go-redis's 67 s: the test is about which of the two ends a call.
func TestStalledServerEveryContextKind(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) {
		o.ReadTimeout, o.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond
		o.DialTimeout, o.PoolTimeout = 200*time.Millisecond, 200*time.Millisecond
		o.MaxRetries, o.MaxRetryBackoff = 1, 100*time.Millisecond
	})
	b, err := New(rdb, &Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	bound := b.direct.(*directSender).bound
	if bound > 2*time.Second {
		t.Fatalf("client bound %v, want about 1.3 s", bound)
	}
	if _, err := b.Acquire(context.Background(), "warm", time.Second); err != nil {
		t.Fatal(err)
	}
	srv.Pause(t)
	defer srv.Resume(t)
	kinds := []struct {
		desc string
		ctx  func() (context.Context, context.CancelFunc)
		by   time.Duration
	}{
		{"Background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, bound},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, bound},
		{"deadline before the bound", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, 300 * time.Millisecond},
		{"deadline after the bound", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), bound+2*time.Second)
		}, bound},
	}
	for _, k := range kinds {
		t.Run(k.desc, func(t *testing.T) {
			ctx, cancel := k.ctx()
			defer cancel()
			start := time.Now()
			_, err := b.Acquire(ctx, "stalled-"+k.desc, time.Second)
			took := time.Since(start)
			if err == nil || errors.Is(err, lock.ErrLocked) {
				t.Errorf("Acquire on a stalled server = %v, want a failure", err)
			}
			if took > k.by+500*time.Millisecond {
				t.Errorf("Acquire took %v, want it to end by %v (+0.5 s)", took, k.by)
			}
		})
	}
}
