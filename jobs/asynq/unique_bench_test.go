package asynqlock_test

import (
	"bufio"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// BenchmarkUniqueEnqueue compares an Enqueue with UniqueUntilDone with a
// plain Enqueue, on one private redis-server: the client's time per
// enqueue, the round trips it sends (lock backend and asynq together),
// and what it costs Redis (INFO commandstats: commands and their usec,
// a script's usec including the commands it ran, counted under their
// own names too).
//
// new enqueues a task of a new key each time; duplicate is refused each
// time, its key's task pending.
func BenchmarkUniqueEnqueue(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	cmds := redistest.Count(rdb)
	backend, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "bench", DisableConfigRecord: true})
	if err != nil {
		b.Fatal(err)
	}
	client := asynq.NewClientFromRedisClient(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	ctx := context.Background()
	var seq atomic.Int64
	fresh := func() *asynq.Task { return asynq.NewTask(taskType, strconv.AppendInt(nil, seq.Add(1), 10)) }
	unique := asynqlock.UniqueUntilDone(backend, insp)
	dup := asynq.NewTask(taskType, []byte("dup"))
	if _, err := asynqlock.Enqueue(ctx, client, dup, unique); err != nil {
		b.Fatal(err)
	}
	tests := []struct {
		desc    string
		enqueue func() error
	}{
		{"plain", func() error { _, err := asynqlock.Enqueue(ctx, client, fresh()); return err }},
		{"unique/new", func() error { _, err := asynqlock.Enqueue(ctx, client, fresh(), unique); return err }},
		{"unique/duplicate", func() error {
			if _, err := asynqlock.Enqueue(ctx, client, dup, unique); !errors.Is(err, asynqlock.ErrDuplicateTask) {
				return err
			}
			return nil
		}},
	}
	for _, tt := range tests {
		b.Run(tt.desc, func(b *testing.B) {
			b.ReportAllocs()
			resetStats(b, rdb)
			trips := cmds.RoundTrips.Load()
			for b.Loop() {
				if err := tt.enqueue(); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(cmds.RoundTrips.Load()-trips-1)/n, "roundtrips/op") // less CONFIG RESETSTAT
			calls, usec := commandStats(b, rdb)
			b.ReportMetric(float64(calls)/n, "redis-cmds/op")
			b.ReportMetric(usec/n, "redis-us/op")
		})
	}
}

// resetStats clears Redis's command statistics.
func resetStats(b *testing.B, rdb *redis.Client) {
	if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// commandStats sums INFO commandstats over every command but the
// benchmark's own (INFO, CONFIG).
func commandStats(b *testing.B, rdb *redis.Client) (calls int64, usec float64) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		// cmdstat_evalsha:calls=10,usec=123,usec_per_call=12.3,...
		name, stats, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "cmdstat_"), ":")
		if !ok || name == "info" || strings.HasPrefix(name, "config") {
			continue
		}
		for f := range strings.SplitSeq(stats, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				n, _ := strconv.ParseInt(v, 10, 64)
				calls += n
			case "usec":
				u, _ := strconv.ParseFloat(v, 64)
				usec += u
			}
		}
	}
	return calls, usec
}
