package asynqlock_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestUniqueCluster runs UniqueUntilDone on a Redis Cluster, each unique
// key on another master than the queue's keys (asynq hash-tags them by
// queue): producers with clients and backends of their own race on a
// key, one enqueues and the others are refused with its task id; an
// asynq server on the cluster runs the task through a Guard, an enqueue
// meanwhile is refused; once the task is done the key is free again.
func TestUniqueCluster(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster(t)
	prefix, queue := redistest.Prefix(t), testQueue()
	rc := c.Client(t)
	insp := asynq.NewInspectorFromRedisClient(rc)
	t.Cleanup(func() { _ = insp.DeleteQueue(queue, true) }) // after the server's shutdown
	producers := make([]uniqueProducer, 4)
	for i := range producers {
		producers[i] = newUniqueProducer(t, c.Client(t), prefix)
	}
	if l := producers[0].b.Layout(); l != redisbackend.LayoutCluster {
		t.Fatalf("layout %v on a ClusterClient, want cluster", l)
	}
	gb, err := redisbackend.New(c.Client(t), &redisbackend.Options{Prefix: prefix, DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := asynqlock.New(gb)
	if err != nil {
		t.Fatal(err)
	}
	started, end := make(chan string, 1), make(chan struct{})
	serveOn(t, c.Client(t), queue, g, func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		started <- id
		select {
		case <-end:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, asynq.Config{})
	runs := 0
	run := func(id string) { // the server runs task id, which ends when told
		t.Helper()
		select {
		case got := <-started:
			if got != id {
				t.Fatalf("the server ran task %s, want %s", got, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("task %s did not start", id)
		}
		runs++
	}
	keys := clusterKeysApart(t, c, rc, producers[0].b, queue, 2)
	for _, key := range keys {
		unique := asynqlock.UniqueKey(key)
		id := race(t, producers, queue, key, unique)
		run(id)
		_, err := producers[0].enqueue(context.Background(), queue, key, nil, unique)
		var dup *asynqlock.DuplicateTaskError
		if !errors.As(err, &dup) || dup.TaskID != id {
			t.Fatalf("enqueue while %s runs: %v, want a duplicate of it", id, err)
		}
		end <- struct{}{}
		waitQueueOn(t, insp, queue, 10*time.Second, "task done",
			func(qi *asynq.QueueInfo) bool { return drained(qi) && qi.Processed == runs })
		next, err := producers[1].enqueue(context.Background(), queue, key, nil, unique)
		if err != nil || next.ID == id {
			t.Fatalf("enqueue after %s was done: %v, %v; want a new task", id, next, err)
		}
		run(next.ID)
		end <- struct{}{}
		waitQueueOn(t, insp, queue, 10*time.Second, "task done",
			func(qi *asynq.QueueInfo) bool { return drained(qi) && qi.Processed == runs })
	}
}

// clusterKeysApart returns n unique keys whose records are each on
// another master than queue's keys, and than each other's when the
// cluster has the masters for it.
func clusterKeysApart(t *testing.T, c *redistest.Cluster, rc *redis.ClusterClient, b *redisbackend.Backend, queue string, n int) []string {
	t.Helper()
	ctx := context.Background()
	master := func(key string) string {
		t.Helper()
		slot, err := rc.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return c.MasterForSlot(t, int(slot))
	}
	used := map[string]bool{master("asynq:{" + queue + "}:pending"): true}
	var keys []string
	for i := 0; len(keys) < n && i < 1000; i++ {
		key := "k-" + strconv.Itoa(i)
		sk, err := admin.StorageKeys(b, asynqlock.UniquePrefix+key)
		if err != nil {
			t.Fatal(err)
		}
		if m := master(sk.Record); !used[m] {
			used[m] = true
			keys = append(keys, key)
		}
	}
	if len(keys) < n {
		t.Fatalf("found %d keys on other masters than the queue's, want %d", len(keys), n)
	}
	return keys
}
