package chaos

import (
	"fmt"
	"sort"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// KindLimit: more live slots of a concurrency limit at one instant, by
// the server's clock, than the limit they were granted under.
const KindLimit = "limit"

// CheckLimit checks concurrency limits by the server's clock: per key
// taken with lock.WithLimit (grants with a Limit), at no instant do more
// leases hold it than the limit of the grant made at that instant. A
// lease holds from its grant ([Grant.AcquiredMs]) until [Grant.EndMs],
// less [OverlapSlack]; grants in the same millisecond count in fence
// order. It also returns the most holders seen at once on any limit key.
// Locks (Limit 0) are [CheckOverlap]'s.
func CheckLimit(grants []Grant) (vs []Violation, maxHolders int) {
	for key, gs := range byKey(grants) {
		if gs[0].Limit == 0 {
			continue
		}
		sort.Slice(gs, func(i, j int) bool {
			if gs[i].AcquiredMs != gs[j].AcquiredMs {
				return gs[i].AcquiredMs < gs[j].AcquiredMs
			}
			return gs[i].Fence < gs[j].Fence
		})
		var live []Grant // the leases holding at the current grant
		for _, g := range gs {
			kept := live[:0]
			for _, h := range live {
				if h.EndMs()-OverlapSlack > g.AcquiredMs {
					kept = append(kept, h)
				}
			}
			live = append(kept, g)
			maxHolders = max(maxHolders, len(live))
			if len(live) > g.Limit {
				vs = append(vs, Violation{KindLimit, fmt.Sprintf(
					"key %s: fence %s (worker %d) granted at %d ms with %d other live slots, limit %d (%s)",
					lockdriver.HashKey(key), g.Fence, g.Worker, g.AcquiredMs, len(live)-1, g.Limit, fences(live[:len(live)-1]))})
			}
		}
	}
	return vs, maxHolders
}

// fences lists the fences of gs.
func fences(gs []Grant) string {
	s := ""
	for i, g := range gs {
		if i > 0 {
			s += " "
		}
		s += string(g.Fence)
	}
	return s
}
