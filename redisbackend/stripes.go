package redisbackend

import (
	"hash/fnv"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/redisbackend/internal/operator"
)

// Striped fence counters (Options.FenceStripes).
//
// With per-key counters (the default, and the TypeScript library's
// layout) every distinct lock key leaves one counter in Redis forever: the
// spec forbids deleting a fence counter or giving it a TTL, since a key's
// fences would then start again. A key space without bound (an
// Idempotency-Key per request, a hash of each job's payload) then grows
// Redis without bound. With N stripes every key takes its fences from one
// of N counters, chosen by a hash of "<prefix>:<key>", so Redis holds at
// most N counters whatever the number of keys.
//
// A stripe's counter moves to max(counter+1, server time in ms) at every
// grant on it (acquire.lua). So:
//   - a key's fences strictly increase, in grant order, as every grant on
//     its stripe takes a larger value than all before it;
//   - they are not consecutive, and not comparable with the fences a
//     TypeScript client (per-key counter) hands out for the same key;
//   - they keep increasing across a change of N or a restart that lost the
//     counters (no persistence, eviction), as long as the server's clock
//     went forward and the old stripe did not run ahead of it: a stripe
//     runs ahead of the clock only while it takes more than 1,000 grants
//     per second, and falls back behind it once the rate drops;
//   - the values are about 1.8e12 today (milliseconds since 1970), far
//     from wire.FenceWarn (9e13, in the year 4821) and wire.FenceMax (9e14);
//     a stripe running ahead of the clock at r grants/s reaches FenceMax
//     after (9e14 - 1.8e12) / r seconds: 285 years at 100,000 grants/s on
//     one stripe.
//
// In the cluster layout the stripe also picks the lock's hash tag (one of N
// tags instead of one of 2^18), so a stripe's counter lives in the slot of
// all its locks; the lock keys' names then depend on N, so every instance
// on a prefix must use the same FenceStripes there (in the single layout
// the lock keys' names do not depend on it).

// MaxFenceStripes is the largest accepted Options.FenceStripes: 65536.
const MaxFenceStripes = operator.MaxFenceStripes

// DefaultFenceStripes is the number of stripes the adapters' documentation
// recommends for unbounded key spaces: so few counters take little Redis
// memory (memory_bench_test.go measures it), and in the cluster layout as
// many hash tags spread the locks over every master.
const DefaultFenceStripes = 1024

// validStripes checks Options.FenceStripes.
func validStripes(n int) error { return operator.ValidStripes(n) }

// stripe returns the stripe of a normalised key (stripes > 0).
func (b *Backend) stripe(norm string) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(b.prefix))
	_, _ = h.Write([]byte{':'})
	_, _ = h.Write([]byte(norm))
	return int(h.Sum64() % uint64(b.stripes))
}

// stripeTag is the cluster hash tag of stripe i: i's 18 low bits as 3
// base64url characters.
func stripeTag(i int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	return string([]byte{alphabet[(i>>12)&63], alphabet[(i>>6)&63], alphabet[i&63]})
}

// stripeKey is the counter of stripe i (wire.StripeKey), with the
// stripe's ":{T}" after the prefix in the cluster layout.
func (b *Backend) stripeKey(lockKey string, i int) string {
	return wire.StripeKey(b.tagPrefix(lockKey), i)
}

// Script flags, boxed once.
var (
	trueArg  any = "1"
	falseArg any = "0"
)

func boolArg(v bool) any {
	if v {
		return trueArg
	}
	return falseArg
}
