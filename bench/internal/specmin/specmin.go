// Package specmin holds the spec-minimal scripts: syncguard's wire format
// (seed 000, the Redis backend specification) done with the least the
// specification requires. The bench's spec-minimal rows and the scriptcost
// program both run them, so the floor they measure is one text.
package specmin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

var (
	// Acquire is acquire.lua: KEYS lock, index and fence key; ARGV lock id,
	// ttl in ms, user key. It returns {1, fence, expiresAtMs}, or 0 when the
	// key is held.
	//
	//go:embed acquire.lua
	Acquire string

	// Release is release.lua: KEYS index key; ARGV lock id. It returns 1
	// released, 0 owned by another lease, -1 not found.
	//
	//go:embed release.lua
	Release string
)

// MaxFence is FENCE_THRESHOLDS.MAX: the backend must refuse a fence above
// it (ADR-004), a check on the client, not in Lua.
const MaxFence = 900_000_000_000_000

// ErrNotObtained is the error of a cycle whose acquire or release the
// scripts refused.
var ErrNotObtained = errors.New("not obtained")

// Cycle is the spec-minimal cycle on a key nobody else uses, under
// prefix: acquire and release send the scripts (KEYS and ARGV as Acquire
// and Release take them) and Cycle checks their replies.
func Cycle(prefix string, ttl time.Duration,
	acquire func(ctx context.Context, keys []string, id, ttlMs, key string) (any, error),
	release func(ctx context.Context, keys []string, id string) (int64, error),
) func(ctx context.Context, key string) error {
	ttlMs := strconv.FormatInt(ttl.Milliseconds(), 10)
	return func(ctx context.Context, key string) error {
		id := lockdriver.NewLockID()
		lockKey := prefix + ":" + key
		idKey := prefix + ":id:" + id
		fenceKey := prefix + ":fence:" + lockKey
		res, err := acquire(ctx, []string{lockKey, idKey, fenceKey}, id, ttlMs, key)
		if err != nil {
			return err
		}
		if err := Granted(res); err != nil {
			return err
		}
		n, err := release(ctx, []string{idKey}, id)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%w: spec-minimal release returned %d", ErrNotObtained, n)
		}
		return nil
	}
}

// Granted checks an acquire reply: {1, fence, expiresAtMs} with a fence of
// 15 digits no greater than MaxFence.
func Granted(res any) error {
	a, ok := res.([]any)
	if !ok || len(a) != 3 || a[0] != int64(1) {
		return fmt.Errorf("%w: spec-minimal acquire returned %v", ErrNotObtained, res)
	}
	fs, _ := a[1].(string)
	f, err := strconv.ParseInt(fs, 10, 64)
	if err != nil || len(fs) != 15 || f > MaxFence {
		return fmt.Errorf("spec-minimal acquire: bad fence %q", fs)
	}
	if _, ok := a[2].(int64); !ok {
		return fmt.Errorf("spec-minimal acquire: bad expiresAtMs %v", a[2])
	}
	return nil
}
