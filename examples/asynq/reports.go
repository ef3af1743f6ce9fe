package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
)

// The report part: a batch of report jobs, at most reportLimit running at
// once across the workers (asynqlock.WithLimit; the key is the task type).
// A job that finds every slot taken waits for one (asynqlock.WithLimitWait,
// 5s by default) and is handed the next one freed, so the server keeps
// asynq's default check intervals.
const (
	reportType    = "report:build"
	reportLimit   = 2
	reportBatch   = 12
	reportWorkers = 6
)

// reportStats is what the report part observed.
type reportStats struct {
	done     int64 // handler runs that finished
	peak     int64 // handler runs at once, at most
	requeued int64 // times a job found every slot taken, waited in vain and was requeued
}

// reports enqueues reportBatch report jobs, runs them on reportWorkers
// asynq workers through a Guard that lets reportLimit run at once, waits
// until the queue is empty, and reports the peak concurrency it saw.
func reports(ctx context.Context, env *demorun.Env) (reportStats, error) {
	w := &syncWriter{w: env.Out}
	backend, err := env.Backend("asynqlock-reports")
	if err != nil {
		return reportStats{}, err
	}
	guard, err := asynqlock.New(backend,
		asynqlock.WithLimit(reportLimit),       // at most 2 running report jobs, whatever the number of workers
		asynqlock.WithLimitWait(5*time.Second), // the default, spelled out: wait up to 5s for a freed slot
		asynqlock.WithTTL(time.Second),         // kept alive while a job runs; bounds RetryDelay's delay here
	)
	if err != nil {
		return reportStats{}, err
	}

	var active, peak, done, requeued atomic.Int64
	mux := asynq.NewServeMux()
	mux.Use(guard.Middleware())
	mux.HandleFunc(reportType, func(ctx context.Context, t *asynq.Task) error {
		n := active.Add(1)
		defer active.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		fmt.Fprintf(w, "  building %s (%d running)\n", t.Payload(), n)
		select {
		case <-time.After(100 * time.Millisecond): // the work
			done.Add(1)
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	// 0: asynq's default check intervals; waiting jobs need no faster retries.
	err = runQueue(ctx, env.Redis, guard, reportWorkers, 0, mux, func(err error) {
		if asynqlock.IsLimited(err) {
			requeued.Add(1)
		} else {
			fmt.Fprintf(w, "  job failed: %v\n", err)
		}
	}, func(client *asynq.Client, queue string) error {
		fmt.Fprintf(w, "Enqueuing %d report jobs for %d workers; over the limit of %d a job waits for a slot\n", reportBatch, reportWorkers, reportLimit)
		for i := range reportBatch {
			task := asynq.NewTask(reportType, []byte("report-"+strconv.Itoa(i+1)))
			if _, err := client.EnqueueContext(ctx, task, asynq.Queue(queue)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return reportStats{}, err
	}
	s := reportStats{done: done.Load(), peak: peak.Load(), requeued: requeued.Load()}
	fmt.Fprintf(w, "Reports: %d done, peak %d running at once (limit %d), %d requeues over the limit\n",
		s.done, s.peak, reportLimit, s.requeued)
	return s, nil
}

// checkReports returns an error unless every report ran and no more than
// reportLimit ran at once.
func checkReports(s reportStats) error {
	var errs []error
	if s.peak > reportLimit {
		errs = append(errs, fmt.Errorf("%d report jobs ran at once, limit %d", s.peak, reportLimit))
	}
	if s.done != reportBatch {
		errs = append(errs, fmt.Errorf("%d report jobs done, want %d", s.done, reportBatch))
	}
	return errors.Join(errs...)
}
