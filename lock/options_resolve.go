package lock

import (
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

func init() {
	contract.ResolveOptions = func(opts any) (time.Duration, any, bool, error) {
		c, err := newConfig(opts.([]Option))
		return c.ttl, c.heartbeat, c.limitSet, err
	}
}
