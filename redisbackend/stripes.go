package redisbackend

import (
	"hash/fnv"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/redisbackend/internal/operator"
)

// Striped fence counters (Options.FenceStripes) bound the number of fence
// counters in Redis: every key takes its fences from one of N counters.
// docs/redis-keys.md says what the fences keep and lose.

// MaxFenceStripes is the largest accepted Options.FenceStripes: 65536.
const MaxFenceStripes = operator.MaxFenceStripes

// DefaultFenceStripes is the number of stripes recommended for unbounded
// key spaces. So few counters take little memory, and in the cluster
// layout as many hash tags spread the locks over every master.
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
