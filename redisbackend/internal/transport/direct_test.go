package transport

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
	client := func(o *redis.Options) *redis.Client {
		o.Addr = "127.0.0.1:1" // never dialled
		c := redis.NewClient(o)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	defClient := client(&redis.Options{})
	def := directRuleOf(defClient)
	// go-redis's defaults: 5 s dial, 6 s pool, 5 s read and write, 3
	// retries, 1 s backoff: 4 tries of 16 s and 3 backoffs.
	if o, _ := optionsOf(defClient); clientBound(o) != 67*time.Second {
		t.Errorf("bound of go-redis's defaults = %v, want 67s", clientBound(o))
	}
	timeouts := directRuleOf(client(&redis.Options{ContextTimeoutEnabled: true}))
	noTimeouts := directRuleOf(client(&redis.Options{ReadTimeout: -1}))
	// -2: go-redis sets no deadline on the connection, so it cannot end a
	// call at the context's either.
	noDeadlines := directRuleOf(client(&redis.Options{ReadTimeout: -2, WriteTimeout: -2, ContextTimeoutEnabled: true}))
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cluster.Close() })
	clusterTimeouts := directRuleOf(cluster)
	type embedded struct{ *redis.Client } // a wrapper keeps the client's Options method
	embeddedTimeouts := directRuleOf(embedded{client(&redis.Options{ContextTimeoutEnabled: true})})
	type hidden struct{ redis.UniversalClient } // a wrapper that hides it
	hiddenTimeouts := directRuleOf(hidden{client(&redis.Options{ContextTimeoutEnabled: true})})
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	soon, cancelSoon := context.WithTimeout(context.Background(), 5*time.Second) // asynq-style
	defer cancelSoon()
	late, cancelLate := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLate()
	tests := []struct {
		desc   string
		ctx    context.Context
		direct *directRule
		want   bool
	}{
		{"Background, default client", context.Background(), def, true},
		{"Background, no rule", context.Background(), nil, true},
		{"cancellable without deadline (net/http), default client", cancellable, def, true},
		{"cancellable without deadline, no rule", cancellable, nil, false},
		{"5 s deadline, default client (bound 67 s)", soon, def, false},
		{"1 h deadline, default client", late, def, true},
		{"5 s deadline, ContextTimeoutEnabled", soon, timeouts, true},
		{"5 s deadline, ContextTimeoutEnabled without deadlines (-2)", soon, noDeadlines, false},
		{"5 s deadline, cluster client with ContextTimeoutEnabled", soon, clusterTimeouts, true},
		{"5 s deadline, wrapper embedding a client with ContextTimeoutEnabled", soon, embeddedTimeouts, true},
		{"5 s deadline, wrapper hiding the client's options", soon, hiddenTimeouts, false},
		{"1 h deadline, wrapper hiding the client's options (no bound known)", late, hiddenTimeouts, false},
		{"Background, wrapper hiding the client's options", context.Background(), hiddenTimeouts, true},
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
