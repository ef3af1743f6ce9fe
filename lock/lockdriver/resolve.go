package lockdriver

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Settings is what a list of lock options sets that an adapter running
// its own acquisition must know (see ResolveOptions).
type Settings struct {
	TTL       time.Duration  // lock.WithTTL's, or DefaultTTL
	Heartbeat lock.Heartbeat // lock.WithHeartbeat's, or the zero Heartbeat
	Limited   bool           // lock.WithLimit was given
}

// ResolveOptions returns the settings of opts, later options overriding
// earlier ones, or the error ValidateOptions returns for them, so that an
// adapter can chain the caller's heartbeat with its own.
func ResolveOptions(opts ...lock.Option) (Settings, error) {
	ttl, hb, limited, err := contract.ResolveOptions(opts)
	if err != nil {
		return Settings{}, err
	}
	return Settings{TTL: ttl, Heartbeat: hb.(lock.Heartbeat), Limited: limited}, nil
}
