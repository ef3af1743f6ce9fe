package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
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

// tickShow is the record of an asynqlock Scheduler's entry, at the key
// "<scheduler key>/entry/<entry id>": the last tick a term enqueued (or
// the start of the entry's first term) and that term's fence.
type tickShow struct {
	// Entry is the entry's id, from the key; "" when the key is not an
	// entry's.
	Entry string     `json:"entry,omitempty"`
	Last  time.Time  `json:"lastTick"`
	Fence lock.Fence `json:"termFence"`
}

// newTickShow decodes the record v of key as an entry's record; nil when
// it is not one (wire.DecodeScheduleTick).
func newTickShow(key string, v []byte) *tickShow {
	r, err := wire.DecodeScheduleTick(v)
	if err != nil {
		return nil
	}
	tk := &tickShow{Last: r.Last, Fence: r.Fence}
	if i := strings.LastIndex(key, "/entry/"); i > 0 {
		tk.Entry = key[i+len("/entry/"):]
	}
	return tk
}

// print prints the entry's record as a show row: the record's key, size
// and time left are head's.
func (tk *tickShow) print(row printRow, head string, nowMs int64) {
	entry := "a scheduler entry's record"
	if tk.Entry != "" {
		entry = "scheduler entry " + display(tk.Entry)
	}
	row("record", "%s: %s: last tick %s (%s ago), by the term of fence %s", head, entry,
		timestamp(tk.Last), duration(ms(age(nowMs, tk.Last.UnixMilli()))), tk.Fence)
}
