package transport

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// clientOptions are the go-redis settings read from a client.
type clientOptions struct {
	retries              int
	read, write, backoff time.Duration
	contextTimeouts      bool
	dial, pool           time.Duration
}

// optionsOf reads the options of any client with go-redis's Options
// method, or reports false.
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
