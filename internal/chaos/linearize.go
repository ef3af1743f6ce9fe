package chaos

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/lock"
)

// The lock history is checked against a mutex with expiring leases, per
// key (porcupine partitions by key). The state is the holder's fence (0:
// free) and the last granted fence. The operations:
//
//   - acquire -> fence f (successful Acquire calls only): legal iff the
//     key is free and f is above every earlier fence; f becomes holder.
//   - extend f -> ok: legal iff f holds. extend f -> not held: legal iff f
//     does not hold. Failed (ambiguous) extends are left out: they can
//     only make the real lease longer, which the model does not rely on.
//   - release f -> ok: legal iff f holds; frees the key. release f -> not
//     held: legal iff f does not hold. A failed (ambiguous) release frees
//     the key if f holds at the point it is linearized, which may be any
//     time until the next grant on the key returned (the server may run a
//     request after the client gave up on it).
//   - expire f: an operation no client makes, added per grant: the
//     server frees the key if f still holds. It can take effect no
//     earlier than the last expiry the server reported for f (server
//     clock; the clients run on the same host and read the same clock),
//     and at the latest when the next grant on the key returned.
//
// Busy acquires are left out: a failed extend may keep a lease alive past
// its last reported expiry, so "someone holds" cannot be checked against
// the model's expire bound.
type mutexState struct{ holder, last uint64 }

type mutexOp struct {
	kind    string // "acquire", "extend", "release", "expire"
	fence   uint64
	outcome Outcome
}

var mutexModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Metadata.(string)
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() interface{} { return mutexState{} },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		s, op := state.(mutexState), input.(mutexOp)
		held := s.holder == op.fence
		switch op.kind {
		case "acquire":
			if s.holder != 0 || op.fence <= s.last {
				return false, s
			}
			return true, mutexState{holder: op.fence, last: op.fence}
		case "extend":
			return (op.outcome == OK) == held, s
		case "release":
			switch op.outcome {
			case OK:
				if !held {
					return false, s
				}
			case NotHeld:
				return !held, s
			}
			if held {
				s.holder = 0
			}
			return true, s
		case "expire":
			if held {
				s.holder = 0
			}
			return true, s
		}
		return false, s
	},
	DescribeOperation: func(input, _ interface{}) string {
		op := input.(mutexOp)
		return fmt.Sprintf("%s %d (%d)", op.kind, op.fence, op.outcome)
	},
}

// Linearizability is the result of [CheckLinearizable].
type Linearizability struct {
	Ops    int
	Result porcupine.CheckResult
}

// CheckLinearizable checks the recorded calls against the mutex model
// described above, within timeout.
func CheckLinearizable(ops []Op, grants []Grant, timeout time.Duration) Linearizability {
	fenceNum := func(f lock.Fence) uint64 { n, _ := f.Uint64(); return n }
	var end int64
	for _, op := range ops {
		end = max(end, op.ReturnNs)
	}
	end++
	// The next grant's return bounds when an earlier lease can still end.
	nextReturn := map[string]int64{} // key + fence -> return of the next grant by fence
	for key, gs := range byKey(grants) {
		sort.Slice(gs, func(i, j int) bool { return gs[i].Fence < gs[j].Fence })
		for i, g := range gs {
			bound := end
			if i+1 < len(gs) {
				bound = gs[i+1].ReturnNs
			}
			nextReturn[key+"\x00"+string(g.Fence)] = bound
		}
	}
	var h []porcupine.Operation
	for _, op := range ops {
		if op.Kind == Acquire && op.Outcome != OK || op.Kind == Extend && op.Outcome == Ambiguous {
			continue
		}
		ret := op.ReturnNs
		if op.Outcome == Ambiguous {
			ret = max(ret, nextReturn[op.Key+"\x00"+string(op.Fence)])
		}
		h = append(h, porcupine.Operation{
			ClientId: op.Worker,
			Input:    mutexOp{kind: op.Kind.String(), fence: fenceNum(op.Fence), outcome: op.Outcome},
			Call:     op.CallNs,
			Return:   ret,
			Metadata: op.Key,
		})
	}
	for _, g := range grants {
		call := g.ExpiresMs * int64(time.Millisecond)
		h = append(h, porcupine.Operation{
			ClientId: g.Worker,
			Input:    mutexOp{kind: "expire", fence: fenceNum(g.Fence)},
			Call:     call,
			Return:   max(call, nextReturn[g.Key+"\x00"+string(g.Fence)]),
			Metadata: g.Key,
		})
	}
	return Linearizability{Ops: len(h), Result: porcupine.CheckOperationsTimeout(mutexModel, h, timeout)}
}
