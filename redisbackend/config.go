package redisbackend

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// The configuration record. The names of a lock's keys depend on the
// Backend's layout and, in the cluster layout, on Options.FenceStripes,
// and its fence counter on Options.FenceStripes in both; an operator's
// tool (syncguard) must name the same keys, and every instance on a
// prefix must agree. So New records the Backend's Config under the prefix,
// in one small hash that is never a lock key:
//
//	<prefix>:config:backend   hash: "layout=<single|cluster> fenceStripes=<n>" -> the Unix ms of the
//	                          last New that recorded it (by its host's clock); no TTL
//
// One field per configuration ever used on the prefix, so the hash stays a
// few bytes whatever the number of instances: every instance of one
// configuration writes the same field (HSET, once per New, never on a lock
// operation), and an instance with another configuration adds a field of
// its own rather than overwriting. admin.RecordedConfigs reads them, newest first;
// admin.CheckRecordedConfig (and admin.Check, when they disagree) reports a
// configuration that differs from the Backend's. User keys beginning with
// "config:" and prefixes with a segment "config" are rejected, as "id:"
// and "fence:" are, so no lock key can take that name. The TypeScript
// library neither writes nor reads it.

// configKeySuffix follows the prefix in the name of the configuration
// record (the same in both layouts: one key per prefix, in any slot).
const configKeySuffix = ":" + wire.ConfigKeyName

// New waits configRecordWait at most for its write of the configuration
// record, which goes on in the background for configRecordTimeout at most:
// on an unreachable or stalled server New returns after configRecordWait,
// and the record is written if the server answers in time.
const (
	configRecordWait    = 200 * time.Millisecond
	configRecordTimeout = 5 * time.Second
)

// Config is what a Backend records under its prefix for operator tools:
// what names its keys.
type Config struct {
	// Layout is LayoutSingle or LayoutCluster (never LayoutAuto).
	Layout Layout `json:"layout"`
	// FenceStripes is Options.FenceStripes: 0 for a counter per key.
	FenceStripes int `json:"fenceStripes"`
}

// String returns the configuration as it is recorded:
// "layout=single fenceStripes=1024".
func (c Config) String() string {
	return "layout=" + c.Layout.String() + " fenceStripes=" + strconv.Itoa(c.FenceStripes)
}

// Config returns the Backend's configuration, as New records it.
func (b *Backend) Config() Config { return Config{Layout: b.layout, FenceStripes: b.stripes} }

// ConfigKey returns the name of the key under which Backends on prefix
// record their configuration: "<prefix>:config:backend" (prefix without
// trailing ':'; DefaultPrefix when empty). It returns New's error for a
// prefix New rejects.
func ConfigKey(prefix string) (string, error) {
	p, err := validatePrefix(prefix)
	if err != nil {
		return "", err
	}
	return p + configKeySuffix, nil
}

// recordConfig writes the configuration record of a new Backend (New):
// one HSET, waited for configRecordWait at most. A failure (an unreachable
// server, a user without the permission) records nothing and is not an
// error: admin.CheckRecordedConfig then finds no record of this configuration.
func recordConfig(client redis.UniversalClient, key string, c Config) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), configRecordTimeout)
		defer cancel()
		_ = client.HSet(ctx, key, c.String(), now).Err()
	}()
	t := time.NewTimer(configRecordWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
