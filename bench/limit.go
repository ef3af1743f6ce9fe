package main

// Limit workloads (-workloads limit): syncguard-go's concurrency limits
// (lock.WithLimit) next to its locks, on the machinery of the distinct-keys
// and fleet workloads. Peers have no limits, so only syncguard-go runs:
//
//   - slot cycles: AcquireSlot + Release on distinct keys (n = limitN, so
//     a slot is always free) at limitG goroutines, interleaved with the
//     lock's Acquire + Release cycle in the same cells;
//   - hot limit: the hot key across processes (fleetProcs x fleetG
//     contenders, hold limitHold), lock.Acquire with WithLimit(limitN)
//     next to the same workload on a lock.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// libSyncguardLimit is syncguard-go taking a slot of a limit instead of a
// lock: a row of the limit workloads only.
const libSyncguardLimit = "syncguard-go limit"

// limitLibrary is syncguard-go with WithLimit(limitN); it is not in
// libraries, so the peer workloads leave it out.
var limitLibrary = library{name: libSyncguardLimit, make: newSyncguardLimit}

// limitN is the n of every limit of the workloads.
const limitN = 4

// findLibrary returns the library called name, the limit and read-write
// ones included.
func findLibrary(name string) (library, bool) {
	for _, l := range append(libraries, limitLibrary, rwLibrary) {
		if l.name == name {
			return l, true
		}
	}
	return library{}, false
}

// newSyncguardLimit: Backend.AcquireSlot (n = limitN) + Release on
// distinct keys; lock.Acquire with WithLimit(limitN) (its default retry)
// for the hot limit.
func newSyncguardLimit(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "sgl"})
	if err != nil {
		return nil, err
	}
	return &impl{
		close: backendCloser(b),
		cycle: func(ctx context.Context, key string) error {
			id, err := b.NewLockID(key)
			if err != nil {
				return err
			}
			l, err := b.AcquireSlot(ctx, key, id, limitN, ttl)
			if err != nil {
				return err
			}
			return b.Release(ctx, l.ID)
		},
		hot: func(ctx context.Context, key string) (func(context.Context) error, error) {
			l, err := lock.Acquire(ctx, b, key, lock.WithTTL(ttl), lock.WithLimit(limitN))
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return b.Release(ctx, l.ID) }, nil
		},
	}, nil
}

// limitResults are the limit workloads' figures, the lock's rows first.
type limitResults struct {
	distinct []distinctResult // lock and slot cycles at cfg.limitG goroutines
	fleet    []fleetResult    // lock and limit on one hot key, hold cfg.limitHold
}

// limitEnv is e narrowed to the limit workloads: syncguard-go's lock and
// limit, limitG goroutines, hold limitHold.
func (e *env) limitEnv() *env {
	le := *e
	le.libs = nil
	for _, l := range e.libs {
		if l.name == libSyncguard {
			le.libs = append(le.libs, l)
		}
	}
	le.libs = append(le.libs, limitLibrary)
	le.cfg.conc = []int{e.cfg.limitG}
	le.cfg.kinds = []ctxKind{ctxBackground}
	le.cfg.holds = []time.Duration{e.cfg.limitHold}
	return &le
}

func (e *env) runLimit(ctx context.Context) (limitResults, error) {
	le := e.limitEnv()
	var r limitResults
	var err error
	if r.distinct, err = le.runDistinct(ctx); err != nil {
		return r, err
	}
	if r.fleet, err = le.runFleet(ctx); err != nil {
		return r, err
	}
	return r, nil
}

// find returns the figures of lib.
func (r limitResults) find(lib string) (distinctResult, fleetResult) {
	var d distinctResult
	var f fleetResult
	for _, x := range r.distinct {
		if x.Lib == lib {
			d = x
		}
	}
	for _, x := range r.fleet {
		if x.Lib == lib {
			f = x
		}
	}
	return d, f
}

// limitMarkdown writes the limit section of the report.
func (r *results) limitMarkdown(b *strings.Builder) {
	if len(r.limit.distinct) == 0 {
		return
	}
	c := r.cfg
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	ld, lf := r.limit.find(libSyncguard)
	sd, sf := r.limit.find(libSyncguardLimit)
	p("## 6. Concurrency limits (syncguard-go only: the peers have none)")
	p("")
	p("Slot = one of n = %d slots of a key (`lock.WithLimit`), next to syncguard-go's lock in the same cells. Cycles: `Backend.AcquireSlot` + `Release` against `Backend.Acquire` + `Release`, %d goroutines on distinct keys (a slot is always free), method of section 1. Hot: %d processes x %d goroutines on one key, hold %v, `lock.Acquire` with `WithLimit(%d)` against `lock.Acquire`, method of section 2.",
		limitN, c.limitG, c.fleetProcs, c.fleetG, c.limitHold, limitN)
	p("")
	met := "missed"
	if sd.Rate() >= 0.8*ld.Rate() {
		met = "met"
	}
	p("| workload | lock | limit (n = %d) | limit / lock | goal |", limitN)
	p("|---|---:|---:|---:|---|")
	p("| acquire + release cycles/s, %d goroutines | %.0f | %.0f | %s | ≥ 0.8x: %s |", c.limitG, ld.Rate(), sd.Rate(), ratio(sd.Rate(), ld.Rate()), met)
	p("| cycle p50 / p99 | %s / %s | %s / %s | | |", ms(ld.P50), ms(ld.P99), ms(sd.P50), ms(sd.P99))
	p("| hot key: acquisitions/s (hold %v) | %.1f | %.1f | %s | |", c.limitHold, lf.Rate(), sf.Rate(), ratio(sf.Rate(), lf.Rate()))
	p("| hot key: Jain index (%d workers) | %.3f | %.3f | | |", c.fleetProcs*c.fleetG, lf.Jain, sf.Jain)
	p("| hot key: max wait / p99 wait | %s / %s | %s / %s | | |", ms(lf.MaxWait), ms(lf.P99Wait), ms(sf.MaxWait), ms(sf.P99Wait))
	p("| hot key: Redis commands / acquisition | %.1f | %.1f | | |", lf.CmdsPerAcq(), sf.CmdsPerAcq())
	p("| hot key: workers starved for 1 s; gave up | %d; %d | %d; %d | | |", lf.Starved, lf.Failed, sf.Starved, sf.Failed)
	p("")
	p("Acquisitions per worker, hot limit: %s.", intsString64(sf.PerWorker))
	p("")
}
