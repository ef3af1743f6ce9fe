package main

// Read-write workload (-workloads rwlock): syncguard-go's fenced
// read-write lock (lock/rwlock) on the fleet workload's machinery. Peers
// have no fenced read-write lock, so only syncguard-go runs: fleetProcs
// processes x fleetG writer goroutines (rwlock.HoldWrite, its default
// retry, hold rwHold) on one key while rwReaders goroutines per process
// stream rwlock.Read on the same key (each read held rwHold), next to the
// same hot key on a plain lock. The writers' grants give Jain's index and
// the waits; the readers only contend.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// libSyncguardRW is syncguard-go's read-write lock, writers measured with
// readers streaming: a row of the rwlock workload only.
const libSyncguardRW = "syncguard-go rwlock"

// rwLibrary is syncguard-go's read-write lock; it is not in libraries, so
// the peer workloads leave it out.
var rwLibrary = library{name: libSyncguardRW, make: newSyncguardRW}

// rwReaders is the number of reader goroutines per process of the rwlock
// workload, and rwReadHold how long each read holds the key.
const (
	rwReaders  = 2
	rwReadHold = time.Millisecond
)

// newSyncguardRW: rwlock.HoldWrite (its default retry) for the hot key,
// with rwReaders goroutines streaming rwlock.Read on the same key from the
// first hot call until close, each read held rwReadHold.
func newSyncguardRW(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "sgrw"})
	if err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(context.Background())
	var once sync.Once
	var wg sync.WaitGroup
	readers := func(key string) {
		for range rwReaders {
			wg.Go(func() {
				for rctx.Err() == nil {
					_ = rwlock.Read(rctx, b, key, func(context.Context, lock.Lease) error {
						time.Sleep(rwReadHold)
						return nil
					}, lock.WithTTL(ttl))
				}
			})
		}
	}
	closeBackend := backendCloser(b)
	return &impl{
		close: func() error {
			stop()
			wg.Wait()
			return closeBackend()
		},
		hot: func(ctx context.Context, key string) (func(context.Context) error, error) {
			once.Do(func() { readers(key) })
			_, _, release, err := rwlock.HoldWrite(ctx, b, key, lock.WithTTL(ttl))
			if err != nil {
				return nil, err
			}
			return func(context.Context) error { return release() }, nil
		},
	}, nil
}

// rwEnv is e narrowed to the rwlock workload: syncguard-go's lock and
// read-write lock, writers' hold rwHold.
func (e *env) rwEnv() *env {
	re := *e
	re.libs = nil
	for _, l := range e.libs {
		if l.name == libSyncguard {
			re.libs = append(re.libs, l)
		}
	}
	re.libs = append(re.libs, rwLibrary)
	re.cfg.holds = []time.Duration{e.cfg.rwHold}
	return &re
}

func (e *env) runRW(ctx context.Context) ([]fleetResult, error) {
	return e.rwEnv().runFleet(ctx)
}

// rwMarkdown writes the read-write section of the report.
func (r *results) rwMarkdown(b *strings.Builder) {
	if len(r.rw) == 0 {
		return
	}
	c := r.cfg
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	var lf, wf fleetResult
	for _, x := range r.rw {
		switch x.Lib {
		case libSyncguard:
			lf = x
		case libSyncguardRW:
			wf = x
		}
	}
	p("## 7. Read-write locks across processes (syncguard-go only: the peers have no fenced read-write lock)")
	p("")
	p("%d processes x %d writers on one key (`rwlock.HoldWrite`, hold %v) while %d goroutines per process stream `rwlock.Read` on it (each read held %v), against %d x %d holders of a plain lock (`lock.Acquire`), method of section 2. Jain's index and the waits are the writers'.",
		c.fleetProcs, c.fleetG, c.rwHold, rwReaders, rwReadHold, c.fleetProcs, c.fleetG)
	p("")
	met := "missed"
	if wf.Jain >= 0.95 {
		met = "met"
	}
	p("| hot key | lock | read-write: writers | goal |")
	p("|---|---:|---:|---|")
	p("| grants/s | %.1f | %.1f | |", lf.Rate(), wf.Rate())
	p("| Jain index (%d holders) | %.3f | %.3f | ≥ 0.95: %s |", c.fleetProcs*c.fleetG, lf.Jain, wf.Jain, met)
	p("| max wait / p99 wait | %s / %s | %s / %s | |", ms(lf.MaxWait), ms(lf.P99Wait), ms(wf.MaxWait), ms(wf.P99Wait))
	p("| workers starved for 1 s; gave up | %d; %d | %d; %d | |", lf.Starved, lf.Failed, wf.Starved, wf.Failed)
	p("")
	p("Grants per writer: %s.", intsString64(wf.PerWorker))
	p("")
}
