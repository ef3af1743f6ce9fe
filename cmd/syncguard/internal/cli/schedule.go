package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

// scheduleShow is the manifest an asynqlock Scheduler on the key stored:
// the entries of its latest term's leader.
type scheduleShow struct {
	ManifestKey string               `json:"manifestKey"`
	Leader      string               `json:"leader"`
	Fence       string               `json:"termFence"`
	Entries     []wire.ScheduleEntry `json:"entries"`
	TTLMs       int64                `json:"ttlMs"`
}

// readSchedule reads the Scheduler manifest of key, if there is one
// (nil when there is none or it is not a manifest).
func (s *session) readSchedule(ctx context.Context, key string) (*scheduleShow, error) {
	keys, err := admin.StorageKeys(s.backend, wire.ScheduleManifestKey(key))
	if err != nil {
		return nil, nil // the key is too long to have one
	}
	node, err := s.nodeOf(ctx, keys.Record)
	if err != nil {
		return nil, err
	}
	pipe := node.Pipeline()
	get := pipe.Get(ctx, keys.Record)
	ttl := pipe.PTTL(ctx, keys.Record)
	_, _ = pipe.Exec(ctx)
	b, err := get.Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, redisError(ctx, node.Options().Addr, err)
	}
	m, err := wire.DecodeScheduleManifest(b)
	if err != nil {
		return nil, nil
	}
	return &scheduleShow{ManifestKey: keys.Record, Leader: m.Identity, Fence: string(m.Fence),
		Entries: m.Entries, TTLMs: ttl.Val().Milliseconds()}, nil
}

// print prints the manifest's rows.
func (sc *scheduleShow) print(row func(name, format string, args ...any)) {
	row("scheduler", "%s: the entries of %s's term (fence %s), kept %s more", display(sc.ManifestKey),
		display(sc.Leader), sc.Fence, duration(ms(sc.TTLMs)))
	for _, e := range sc.Entries {
		row("entry", "%s", fmt.Sprintf("%s  content %s", display(e.ID), e.Content))
	}
}
