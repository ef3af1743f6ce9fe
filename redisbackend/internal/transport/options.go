package transport

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// clientOptions are the go-redis settings read from a client: retries and
// timeouts (resend.go), and whether go-redis ends commands at their
// context's deadline (direct.go).
type clientOptions struct {
	retries              int
	read, write, backoff time.Duration
	contextTimeouts      bool
	dial, pool           time.Duration // 0: not read (the client's own defaults apply)
}

// optionsOf reads the options of any client with go-redis's Options method
// (a *redis.Client, a failover client, a *redis.ClusterClient, or a wrapper
// embedding one), or reports false for a client without one. By the
// method, not the type: a wrapper embedding the go-redis client is judged
// as that client.
func optionsOf(client any) (clientOptions, bool) {
	switch c := client.(type) {
	case interface{ Options() *redis.Options }:
		o := c.Options()
		return clientOptions{o.MaxRetries, o.ReadTimeout, o.WriteTimeout, o.MaxRetryBackoff, o.ContextTimeoutEnabled, o.DialTimeout, o.PoolTimeout}, true
	case interface{ Options() *redis.ClusterOptions }:
		o := c.Options()
		return clientOptions{o.MaxRetries, o.ReadTimeout, o.WriteTimeout, o.MaxRetryBackoff, o.ContextTimeoutEnabled, o.DialTimeout, o.PoolTimeout}, true
	}
	return clientOptions{}, false
}
