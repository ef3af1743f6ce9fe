package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The unique part: a refund task that stays unique until it is done
// (asynqlock.UniqueUntilDone), decided when it is enqueued: of producers
// racing on it, one enqueues and the others learn the task's id; an
// enqueue while it runs is refused too; once it is done, the next one
// goes in.
const (
	refundType      = "refund:issue"
	refundProducers = 3
)

// uniqueStats is what the unique part observed.
type uniqueStats struct {
	enqueued, refused int // of the racing producers
	whileRunning      error
	afterDone         error
	runs              int
}

// unique runs the unique part on an asynq server whose handler runs
// through a Guard on the same Redis, which holds the key while a refund
// is issued.
func unique(ctx context.Context, env *demorun.Env) (uniqueStats, error) {
	w := &syncWriter{w: env.Out}
	// Striped fence counters: a unique key per payload, as for the Guard.
	backend, err := env.BackendWith("asynqlock-unique", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return uniqueStats{}, err
	}
	guard, err := asynqlock.New(backend, asynqlock.WithTTL(time.Second))
	if err != nil {
		return uniqueStats{}, err
	}
	var s uniqueStats
	started := make(chan string, 2)
	mux := asynq.NewServeMux()
	mux.Use(guard.Middleware())
	mux.HandleFunc(refundType, func(ctx context.Context, t *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		fmt.Fprintf(w, "  issuing refund %s (task %s)\n", t.Payload(), id)
		started <- id
		time.Sleep(300 * time.Millisecond) // the work
		return nil
	})
	insp := asynq.NewInspectorFromRedisClient(env.Redis)
	defer insp.Close()
	opt := asynqlock.UniqueUntilDone(backend, insp)
	err = runQueue(ctx, env.Redis, guard, 2, 100*time.Millisecond, mux, func(err error) {
		fmt.Fprintf(w, "  task failed: %v\n", err)
	}, func(client *asynq.Client, queue string) error {
		enqueue := func() (*asynq.TaskInfo, error) {
			return asynqlock.Enqueue(ctx, client, asynq.NewTask(refundType, []byte("7")),
				asynqlock.TaskOptions(asynq.Queue(queue)), opt)
		}
		s.enqueued, s.refused = race(w, enqueue)
		<-started
		_, s.whileRunning = enqueue()
		fmt.Fprintf(w, "While it runs: %v\n", s.whileRunning)
		if err := waitDrained(ctx, insp, queue, 10*time.Second); err != nil {
			return err
		}
		_, s.afterDone = enqueue()
		fmt.Fprintf(w, "Once it is done: %v (enqueued again)\n", s.afterDone)
		<-started
		return nil
	})
	s.runs = 2 - len(started)
	return s, err
}

// race runs refundProducers enqueues at once and says what each got.
func race(w *syncWriter, enqueue func() (*asynq.TaskInfo, error)) (enqueued, refused int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range refundProducers {
		wg.Go(func() {
			info, err := enqueue()
			mu.Lock()
			defer mu.Unlock()
			var dup *asynqlock.DuplicateTaskError
			switch {
			case err == nil:
				enqueued++
				fmt.Fprintf(w, "  a producer enqueued task %s\n", info.ID)
			case errors.As(err, &dup):
				refused++
				fmt.Fprintf(w, "  a producer was refused: task %s has the key\n", dup.TaskID)
			default:
				fmt.Fprintf(w, "  a producer failed: %v\n", err)
			}
		})
	}
	wg.Wait()
	fmt.Fprintf(w, "Unique: %d of %d producers enqueued, %d refused (asynqlock.ErrDuplicateTask)\n", enqueued, refundProducers, refused)
	return enqueued, refused
}

// checkUnique fails unless one producer enqueued, the enqueue while the
// task ran was refused, and the one after it was done went in.
func checkUnique(s uniqueStats) error {
	if s.enqueued != 1 || s.refused != refundProducers-1 {
		return fmt.Errorf("%d racing producers enqueued and %d were refused, want 1 and %d", s.enqueued, s.refused, refundProducers-1)
	}
	if !errors.Is(s.whileRunning, asynqlock.ErrDuplicateTask) {
		return fmt.Errorf("an enqueue while the task ran: %v, want a duplicate", s.whileRunning)
	}
	if s.afterDone != nil {
		return fmt.Errorf("an enqueue after the task was done: %v", s.afterDone)
	}
	return nil
}
