package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Library names, in report order. syncguard-go is the reference of every ratio.
const (
	libSyncguard = "syncguard-go"
	libRedislock = "bsm/redislock"
	libRedsync   = "redsync"
	libRueidis   = "rueidislock"
	libRaw       = "raw SET NX PX + DEL"
	// libSpecMin is syncguard's wire format with the least seed 000's
	// specification requires (specmin.go): the floor of the format.
	libSpecMin = "spec-minimal scripts"
	// libRedislockAP is not a documented configuration of redislock: it is
	// there to show what go-redis's own (experimental) autopipeliner gives
	// a peer, next to syncguard-go's built-in coalescing.
	libRedislockAP = "bsm/redislock on go-redis AutoPipeline"
	// libSyncguardCTE is syncguard-go on a client that sets
	// ContextTimeoutEnabled (the README's Usage), measured under the 5 s
	// deadline only, the kind it changes something for.
	libSyncguardCTE = "syncguard-go, ContextTimeoutEnabled"
	// libSyncguardAP is syncguard-go given go-redis's (experimental)
	// blocking autopipeliner as its client, next to libRedislockAP: what
	// go-redis's own pipelining of every call gives syncguard-go's cycle
	// (measured to decide whether a transport beyond go-redis's synchronous
	// pipelines is in scope).
	libSyncguardAP = "syncguard-go on go-redis AutoPipeline"
	// libSpecMinRueidis is the spec-minimal scripts on a rueidis client:
	// the format's floor on a client that pipelines every call, as
	// rueidislock's does (specmin.go).
	libSpecMinRueidis = "spec-minimal scripts on rueidis"
)

// impl is one library wired to one go-redis client.
type impl struct {
	// cycle takes key without waiting and releases it: one
	// acquire+release cycle on a key nobody else uses.
	cycle func(ctx context.Context, key string) error
	// hot waits for key with the library's own retry (nil: the library is
	// left out of the hot-key workload) and returns the release.
	hot func(ctx context.Context, key string) (release func(context.Context) error, err error)
	// lease takes key without waiting for the keep-alive workload (nil:
	// left out of it).
	lease func(ctx context.Context, key string) (kept, error)
	// close releases what the library holds besides the client (nil: nothing).
	close func() error
}

// kept is a held lease whose keep-alive can be started and stopped.
type kept interface {
	start()
	stop()
	release(ctx context.Context) error
}

type library struct {
	name string
	make func(rdb *redis.Client, ttl time.Duration) (*impl, error)
	// distinctOnly leaves the library out of the hot-key and keep-alive
	// workloads.
	distinctOnly bool
	// kinds, when set, are the only context kinds the library runs with
	// in the distinct-keys workload (a row that is no default
	// configuration, kept to the kind it is about); nil: all of them.
	kinds []ctxKind
}

// runsWith reports whether l runs with context kind k.
func (l library) runsWith(k ctxKind) bool { return l.kinds == nil || slices.Contains(l.kinds, k) }

// allocKind is the context kind of l's allocation pass: Background, or
// its one kind.
func (l library) allocKind() ctxKind {
	if l.runsWith(ctxBackground) {
		return ctxBackground
	}
	return l.kinds[0]
}

var libraries = []library{
	{name: libSyncguard, make: newSyncguard},
	{name: libRedislock, make: newRedislock},
	{name: libRedsync, make: newRedsync},
	{name: libRueidis, make: newRueidislock},
	{name: libRaw, make: newRaw, distinctOnly: true},
	{name: libSpecMin, make: newSpecMinimal, distinctOnly: true},
	{name: libRedislockAP, make: newRedislockAP, distinctOnly: true, kinds: []ctxKind{ctxBackground}},
	{name: libSyncguardCTE, make: newSyncguardCTE, distinctOnly: true, kinds: []ctxKind{ctxDeadline}},
	{name: libSyncguardAP, make: newSyncguardAP, distinctOnly: true, kinds: []ctxKind{ctxBackground}},
	{name: libSpecMinRueidis, make: newSpecMinimalRueidis, distinctOnly: true},
}

var errNotObtained = errors.New("not obtained")

// syncguard-go: redisbackend.New + Backend.Acquire/Release; lock.Acquire
// (its default retry) for the hot key; lock.Keep for keep-alive.
func newSyncguard(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "sg"})
	if err != nil {
		return nil, err
	}
	return &impl{
		close: backendCloser(b),
		cycle: syncguardCycle(b, ttl),
		hot: func(ctx context.Context, key string) (func(context.Context) error, error) {
			l, err := lock.Acquire(ctx, b, key, lock.WithTTL(ttl))
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return b.Release(ctx, l.ID) }, nil
		},
		lease: func(ctx context.Context, key string) (kept, error) {
			l, err := b.Acquire(ctx, key, ttl)
			if err != nil {
				return nil, err
			}
			return &sgKept{b: b, l: l}, nil
		},
	}, nil
}

// newSyncguardCTE is newSyncguard's cycle on a client like rdb with
// ContextTimeoutEnabled set (libSyncguardCTE). The client is one of its
// own (rdb's round-trip hook is not on it).
func newSyncguardCTE(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	o := rdb.Options()
	c := redis.NewClient(&redis.Options{Addr: o.Addr, PoolSize: o.PoolSize, ContextTimeoutEnabled: true})
	b, err := redisbackend.New(c, &redisbackend.Options{Prefix: "sgc"})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &impl{
		close: func() error { _ = b.Close(); return c.Close() },
		cycle: syncguardCycle(b, ttl),
	}, nil
}

// newSyncguardAP is newSyncguard's cycle with go-redis's blocking
// autopipeliner on rdb (its default options) as the Backend's client
// (libSyncguardAP). The Backend's own coalescing stays on, as by default
// (bench/README.md has a run with it off as well).
func newSyncguardAP(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	ap, err := rdb.AutoPipeline() // closed with rdb
	if err != nil {
		return nil, err
	}
	b, err := redisbackend.New(ap, &redisbackend.Options{Prefix: "sgap"})
	if err != nil {
		return nil, err
	}
	return &impl{close: backendCloser(b), cycle: syncguardCycle(b, ttl)}, nil
}

// syncguardCycle is Backend.Acquire (no waiting) + Release.
func syncguardCycle(b *redisbackend.Backend, ttl time.Duration) func(ctx context.Context, key string) error {
	return func(ctx context.Context, key string) error {
		l, err := b.Acquire(ctx, key, ttl)
		if err != nil {
			return err
		}
		return b.Release(ctx, l.ID)
	}
}

// backendCloser returns b's Close (the release subscription), or nil when
// the backend has none.
func backendCloser(b *redisbackend.Backend) func() error {
	if c, ok := any(b).(interface{ Close() error }); ok {
		return c.Close
	}
	return nil
}

type sgKept struct {
	b    *redisbackend.Backend
	l    lock.Lease
	halt func() error
}

func (k *sgKept) start() { _, k.halt = lock.Keep(context.Background(), k.b, k.l) }
func (k *sgKept) stop() {
	if k.halt != nil {
		_ = k.halt()
	}
}
func (k *sgKept) release(ctx context.Context) error { return k.b.Release(ctx, k.l.ID) }

// bsm/redislock: Obtain/Release, NoRetry (its default) on distinct keys,
// LinearBackoff(10ms) for the hot key, Refresh every ttl/3 for keep-alive.
func newRedislock(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	c := redislock.New(rdb)
	hotOpts := func() *redislock.Options {
		return &redislock.Options{RetryStrategy: redislock.LinearBackoff(10 * time.Millisecond)}
	}
	return &impl{
		cycle: redislockCycle(c, ttl),
		hot: func(ctx context.Context, key string) (func(context.Context) error, error) {
			l, err := c.Obtain(ctx, key, ttl, hotOpts())
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		},
		lease: func(ctx context.Context, key string) (kept, error) {
			l, err := c.Obtain(ctx, key, ttl, nil)
			if err != nil {
				return nil, err
			}
			return &tickKept{
				every:  ttl / 3,
				extend: func(ctx context.Context) error { return l.Refresh(ctx, ttl, nil) },
				rel:    l.Release,
			}, nil
		},
	}, nil
}

// bsm/redislock with go-redis's blocking autopipeliner (its default
// options) as its client: Obtain/Release on distinct keys only.
func newRedislockAP(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	ap, err := rdb.AutoPipeline() // closed with rdb
	if err != nil {
		return nil, err
	}
	return &impl{cycle: redislockCycle(redislock.New(ap), ttl)}, nil
}

// redislockCycle is Obtain (no retry) + Release.
func redislockCycle(c *redislock.Client, ttl time.Duration) func(ctx context.Context, key string) error {
	return func(ctx context.Context, key string) error {
		l, err := c.Obtain(ctx, key, ttl, nil)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
}

// redsync: one goredis v9 pool, NewMutex(key, WithExpiry(ttl)) per lock,
// Lock/Unlock with its default retries (32 tries, 50-250 ms apart), Extend
// every ttl/3 for keep-alive.
func newRedsync(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	rs := redsync.New(goredis.NewPool(rdb))
	return &impl{
		cycle: func(ctx context.Context, key string) error {
			m := rs.NewMutex(key, redsync.WithExpiry(ttl))
			if err := m.LockContext(ctx); err != nil {
				return err
			}
			if ok, err := m.UnlockContext(ctx); err != nil || !ok {
				return errors.Join(errNotObtained, err)
			}
			return nil
		},
		hot: func(ctx context.Context, key string) (func(context.Context) error, error) {
			m := rs.NewMutex(key, redsync.WithExpiry(ttl))
			if err := m.LockContext(ctx); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				if ok, err := m.UnlockContext(ctx); err != nil || !ok {
					return errors.Join(errNotObtained, err)
				}
				return nil
			}, nil
		},
		lease: func(ctx context.Context, key string) (kept, error) {
			m := rs.NewMutex(key, redsync.WithExpiry(ttl))
			if err := m.LockContext(ctx); err != nil {
				return nil, err
			}
			return &tickKept{
				every: ttl / 3,
				extend: func(ctx context.Context) error {
					ok, err := m.ExtendContext(ctx)
					if err == nil && !ok {
						err = errNotObtained
					}
					return err
				},
				rel: func(ctx context.Context) error { _, err := m.UnlockContext(ctx); return err },
			}, nil
		},
	}, nil
}

// rueidislock: its README's single-Redis configuration (KeyMajority 1,
// NoLoopTracking on Redis >= 7.0.5) on a rueidis client of its own to the
// same server (rdb is only read for its address, so the go-redis
// round-trip hook does not see it). KeyValidity is the TTL; the locker
// extends every lease itself (every ttl/3 here, as the peers' keep-alive)
// from the moment it is acquired, in a goroutine per lease. TryWithContext
// + cancel on distinct keys; WithContext (waits for the client-side-caching
// invalidation of the key) for the hot key.
func newRueidislock(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	lk, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption:   rueidis.ClientOption{InitAddress: []string{rdb.Options().Addr}},
		KeyMajority:    1,
		NoLoopTracking: true,
		KeyValidity:    ttl,
		ExtendInterval: ttl / 3,
	})
	if err != nil {
		return nil, err
	}
	return &impl{
		close: func() error { lk.Close(); return nil },
		cycle: func(ctx context.Context, key string) error {
			_, cancel, err := lk.TryWithContext(ctx, key)
			if err != nil {
				return err
			}
			cancel() // releases (DEL script) and returns when done
			return nil
		},
		hot: func(ctx context.Context, key string) (func(context.Context) error, error) {
			_, cancel, err := lk.WithContext(ctx, key)
			if err != nil {
				return nil, err
			}
			return func(context.Context) error { cancel(); return nil }, nil
		},
		lease: func(ctx context.Context, key string) (kept, error) {
			// The lease outlives the acquire call: its context must not be
			// the caller's.
			_, cancel, err := lk.TryWithContext(context.Background(), key)
			if err != nil {
				return nil, err
			}
			return &selfKept{rel: cancel}, nil
		},
	}, nil
}

// selfKept is a lease its library keeps alive on its own from acquisition
// to release (rueidislock): start and stop do nothing.
type selfKept struct{ rel func() }

func (k *selfKept) start()                        {}
func (k *selfKept) stop()                         {}
func (k *selfKept) release(context.Context) error { k.rel(); return nil }

// raw baseline: SET key token NX PX ttl + DEL. No ownership check, fence,
// server time or index; no retry, so it is left out of the hot-key and
// keep-alive workloads.
func newRaw(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	return &impl{
		cycle: func(ctx context.Context, key string) error {
			ok, err := rdb.SetNX(ctx, key, lockdriver.NewLockID(), ttl).Result()
			if err != nil {
				return err
			}
			if !ok {
				return errNotObtained
			}
			return rdb.Del(ctx, key).Err()
		},
	}, nil
}

// tickKept is the keep-alive the peers document: one goroutine per lease
// extending it every ttl/3.
type tickKept struct {
	every  time.Duration
	extend func(context.Context) error
	rel    func(context.Context) error

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (k *tickKept) start() {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		t := time.NewTicker(k.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = k.extend(ctx)
			}
		}
	}()
}

func (k *tickKept) stop() {
	if k.cancel != nil {
		k.cancel()
		k.wg.Wait()
	}
}

func (k *tickKept) release(ctx context.Context) error { return k.rel(ctx) }

// pickLibraries returns the libraries named in list (comma-separated, in
// report order), always with syncguard-go; all of them when list is empty.
func pickLibraries(list string) ([]library, error) {
	if strings.TrimSpace(list) == "" {
		return libraries, nil
	}
	want := map[string]bool{libSyncguard: true}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.ContainsFunc(libraries, func(l library) bool { return l.name == name }) {
			return nil, fmt.Errorf("unknown library %q in -libs", name)
		}
		want[name] = true
	}
	var out []library
	for _, l := range libraries {
		if want[l.name] {
			out = append(out, l)
		}
	}
	return out, nil
}
