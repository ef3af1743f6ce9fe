package chaos

import (
	"context"
	"fmt"
	"sort"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// The read-write key ([Config.ReadWrite]): workers take it with
// rwlock.Write once in three jobs, first, and rwlock.Read otherwise, through the
// same hooked Backends, faults and checks as the locks. Writers write to
// the fenced register; readers do not (they share the key). The history's
// grants carry the mode; [CheckReadWrite] checks that no writer holds the
// key beside anyone by the server's clock, and the linearizability model
// takes the key as a read-write lock (see linearize.go).

// RWKey is the key the workers take as a read-write lock.
const RWKey = "rw"

// rwMode picks the mode of a worker's n-th job on the read-write key
// (from 0): a write, then two reads, and again. Each worker's first job
// there is a write, so that even a short run has writers beside the
// readers.
func rwMode(n int) rwlock.Mode {
	if n%3 == 0 {
		return rwlock.ModeWrite
	}
	return rwlock.ModeRead
}

// doer is the Do of mode: lock.Do for 0, else rwlock.Read or Write.
func doer(mode rwlock.Mode) func(context.Context, lock.Backend, string, func(context.Context, lock.Lease) error, ...lock.Option) error {
	switch mode {
	case rwlock.ModeRead:
		return rwlock.Read
	case rwlock.ModeWrite:
		return rwlock.Write
	}
	return lock.Do
}

// kind names what j takes, for the report: "" a lock, "slot", "read",
// "write", "multi".
func (j job) kind() string {
	switch {
	case j.limit != nil:
		return "slot"
	case j.keys != nil:
		return "multi"
	case j.mode != 0:
		return j.mode.String()
	}
	return ""
}

// KindReadWrite: a writer of a read-write key held it beside another
// holder at some instant, by the server's clock.
const KindReadWrite = "read-write"

// CheckReadWrite checks read-write keys (grants with a Mode) by the
// server's clock: in fence order, a writer starts no earlier than every
// earlier grant on the key ended, and a reader no earlier than every
// earlier writer ended ([Grant.EndMs], less [OverlapSlack]). It returns
// the violations and the most readers seen holding at once.
func CheckReadWrite(grants []Grant) (vs []Violation, maxReaders int) {
	for key, gs := range byKey(grants) {
		if gs[0].Mode == "" {
			continue
		}
		sort.Slice(gs, func(i, j int) bool { return gs[i].Fence < gs[j].Fence })
		var anyEnd, writerEnd int64 // the latest end of every earlier grant, of every earlier writer
		var live []Grant
		for _, g := range gs {
			bound := writerEnd
			if g.Mode == "write" {
				bound = anyEnd
			}
			if bound-OverlapSlack > g.AcquiredMs {
				vs = append(vs, Violation{KindReadWrite, fmt.Sprintf("key %s: %s fence %s (worker %d) granted %d ms before an earlier holder ended",
					lockdriver.HashKey(key), g.Mode, g.Fence, g.Worker, bound-g.AcquiredMs)})
			}
			anyEnd = max(anyEnd, g.EndMs())
			if g.Mode == "write" {
				writerEnd = max(writerEnd, g.EndMs())
				continue
			}
			kept := live[:0]
			for _, h := range live {
				if h.EndMs()-OverlapSlack > g.AcquiredMs {
					kept = append(kept, h)
				}
			}
			live = append(kept, g)
			maxReaders = max(maxReaders, len(live))
		}
	}
	return vs, maxReaders
}
