package redisbackend

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// The configuration record: New records what names the Backend's keys
// under "<prefix>:config:backend", one hash field per configuration, so
// that operator tools name the same keys and spot instances that disagree.
// docs/redis-keys.md describes it.

// configKeySuffix follows the prefix in the configuration record's name,
// in both layouts.
const configKeySuffix = ":" + wire.ConfigKeyName

// New waits configRecordWait at most for the record's write, which goes on
// in the background for configRecordTimeout at most.
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

// ConfigKey returns the key under which Backends on prefix record their
// configuration: "<prefix>:config:backend". An empty prefix means
// DefaultPrefix. It returns New's error for a prefix New rejects.
func ConfigKey(prefix string) (string, error) {
	p, err := validatePrefix(prefix)
	if err != nil {
		return "", err
	}
	return p + configKeySuffix, nil
}

// recordConfig writes a new Backend's configuration record with one HSET.
// A failure records nothing and is not an error.
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
