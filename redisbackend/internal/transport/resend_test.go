package transport

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestResendWindow: the window covers the client's retries (MaxRetries x
// (ReadTimeout + MaxRetryBackoff) + 1 s, within its bounds), read from a
// client's options, a wrapper's that embeds the client, or, for a client
// whose options cannot be read, from defaultResendWindow. No client here
// dials.
func TestResendWindow(t *testing.T) {
	client := func(o *redis.Options) *redis.Client {
		o.Addr = "127.0.0.1:1"
		c := redis.NewClient(o)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	rdb := client(&redis.Options{MaxRetries: 2, ReadTimeout: 4 * time.Second, MaxRetryBackoff: time.Second})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: 2, ReadTimeout: 4 * time.Second, MaxRetryBackoff: time.Second})
	t.Cleanup(func() { _ = cluster.Close() })
	type embedded struct{ *redis.Client }
	type hidden struct{ redis.UniversalClient }
	clientWindow := 2*(4*time.Second+time.Second) + time.Second
	tests := []struct {
		desc   string
		client any
		want   time.Duration
	}{
		{"client", rdb, clientWindow},
		{"cluster client", cluster, clientWindow},
		{"wrapper embedding the client", embedded{rdb}, clientWindow},
		{"wrapper hiding the client's options", hidden{rdb}, defaultResendWindow},
		{"go-redis's default options", client(&redis.Options{}), 3*(5*time.Second+time.Second) + time.Second},
		{"no read timeout (-2): retries only on broken connections", client(&redis.Options{ReadTimeout: -2, WriteTimeout: -2}), minResendWindow},
		{"no retries", client(&redis.Options{MaxRetries: -1}), minResendWindow},
		{"long timeouts", client(&redis.Options{MaxRetries: 10, ReadTimeout: time.Minute}), maxResendWindow},
	}
	if got := ResendWindow(client(&redis.Options{})); got != defaultResendWindow {
		t.Errorf("defaultResendWindow is %v; a client with go-redis's default options has %v", defaultResendWindow, got)
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := ResendWindow(tt.client); got != tt.want {
				t.Errorf("ResendWindow = %v, want %v", got, tt.want)
			}
		})
	}
}
