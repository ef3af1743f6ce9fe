package chaos

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// The lock history is checked against a semaphore with expiring leases,
// per key (porcupine partitions by key): a mutex for a lock key (one
// slot), n slots for a key taken with lock.WithLimit(n). The state is the
// fences holding the key's slots and the last granted fence. The
// operations:
//
//   - acquire -> fence f (successful Acquire calls only, called at the
//     first attempt with the lease's lock id, Op.FromNs: a lost reply's
//     retry, or a waiter's attempt that finds a slot handed to it before
//     it was sent, reports an earlier grant): legal iff fewer
//     than n fences hold and f is above every earlier fence (a key's
//     grants are fenced in grant order, slots included); f then holds.
//   - extend f -> ok: legal iff f holds. extend f -> not held: legal iff f
//     does not hold. Failed (ambiguous) extends are left out: they can
//     only make the real lease longer, which the model does not rely on.
//   - release f -> ok: legal iff f holds; frees its slot. release f -> not
//     held: legal iff f does not hold. A failed (ambiguous) release frees
//     the slot if f holds at the point it is linearized, which may be any
//     time until the next grant on the key returned (the server may run a
//     request after the client gave up on it).
//   - expire f: an operation no client makes, added per grant: the
//     server frees f's slot if f still holds. It can take effect no
//     earlier than the last expiry the server reported for f (server
//     clock; the clients run on the same host and read the same clock),
//     and at the latest when the next grant on a lock key returned (on a
//     limit key, later grants may take other slots: any time until the
//     end of the history; likewise for a failed release below).
//
// A read-write key is the same with its own rule for acquire: a reader's
// is legal iff no writer holds, a writer's iff nobody holds; a writer's
// fence is kept apart so that its end (release or expire) frees the key
// for readers.
//
// Lookups change nothing and are left out. Busy acquires are left out: a failed extend may keep a lease alive past
// its last reported expiry, so "n leases hold" cannot be checked against
// the model's expire bound.
type mutexState struct {
	holders [modelHolders]uint64 // ascending, zeros (free slots) last
	last    uint64
	writer  uint64 // the fence of the writer holding a read-write key; 0: none
}

// maxModelSlots is the largest limit the model checks; the run's limit
// key uses at most this many (see Config.Limit).
const maxModelSlots = 4

// modelHolders is the most leases the model lets hold a key at once: the
// readers of a read-write key, at most one per worker (Config.Workers).
const modelHolders = 8

// holds reports whether fence f holds a slot, and which.
func (s mutexState) holds(f uint64) (int, bool) {
	for i, h := range s.holders {
		if h == f && f != 0 {
			return i, true
		}
	}
	return -1, false
}

// free returns s with fence f, holding slot i if held, freed.
func (s mutexState) free(i int, held bool, f uint64) mutexState {
	if !held {
		return s
	}
	if s.writer == f {
		s.writer = 0
	}
	return s.with(i, 0)
}

// count is the number of fences holding.
func (s mutexState) count() int {
	n := 0
	for _, h := range s.holders {
		if h != 0 {
			n++
		}
	}
	return n
}

// with returns s with holder i replaced by f (0: freed), in canonical
// order, so that equal states compare equal.
func (s mutexState) with(i int, f uint64) mutexState {
	s.holders[i] = f
	sort.Slice(s.holders[:], func(a, b int) bool {
		x, y := s.holders[a], s.holders[b]
		return x != 0 && (y == 0 || x < y)
	})
	return s
}

type mutexOp struct {
	kind    string // "acquire", "extend", "release", "expire"
	fence   uint64
	outcome Outcome
	slots   int    // the key's limit; 1 for a lock
	mode    string // "read" or "write" on a read-write key; "" else
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
		i, held := s.holds(op.fence)
		switch op.kind {
		case "acquire":
			n := s.count()
			free := n < op.slots
			switch op.mode {
			case "read":
				free = s.writer == 0
			case "write":
				free = n == 0
			}
			if !free || n == len(s.holders) || op.fence <= s.last {
				return false, s
			}
			s = s.with(n, op.fence)
			s.last = op.fence
			if op.mode == "write" {
				s.writer = op.fence
			}
			return true, s
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
			return true, s.free(i, held, op.fence)
		case "expire":
			return true, s.free(i, held, op.fence)
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
	// IllegalKeys are the hashes of the keys whose history is not
	// linearizable, when Result is Illegal.
	IllegalKeys []string
	// Visualization is porcupine's HTML view of the first such key's
	// history (its longest linearizable prefix and where it fails), for
	// the person debugging the run; empty when the history is legal.
	Visualization []byte
}

// CheckLinearizable checks the recorded calls against the semaphore model
// described above (a mutex for locks), within timeout.
func CheckLinearizable(ops []Op, grants []Grant, timeout time.Duration) Linearizability {
	h := modelHistory(ops, grants)
	lin := Linearizability{Ops: len(h), Result: porcupine.CheckOperationsTimeout(mutexModel, h, timeout)}
	if lin.Result == porcupine.Illegal {
		lin.explain(h, timeout)
	}
	return lin
}

// modelHistory is the history as the model's operations: the calls that
// tell something about the holders, and each grant's expiry.
func modelHistory(ops []Op, grants []Grant) []porcupine.Operation {
	fenceNum := func(f lock.Fence) uint64 { n, _ := f.Uint64(); return n }
	slots := map[string]int{} // key -> its limit; absent: a lock
	modes := map[string]string{}
	for _, g := range grants {
		if g.Limit > 0 {
			slots[g.Key] = g.Limit
		}
		modes[g.Key+"\x00"+string(g.Fence)] = g.Mode
	}
	slotsOf := func(key string) int { return max(slots[key], 1) }
	nextReturn := nextReturns(ops, grants)
	var h []porcupine.Operation
	for _, op := range ops {
		if op.Kind == Lookup || op.Kind == Acquire && op.Outcome != OK || op.Kind == Extend && op.Outcome == Ambiguous {
			continue
		}
		call, ret := op.CallNs, op.ReturnNs
		if op.Kind == Acquire && op.FromNs != 0 {
			// The grant may precede the attempt that reported it (see
			// Op.FromNs).
			call = min(call, op.FromNs)
		}
		if op.Outcome == Ambiguous {
			ret = max(ret, nextReturn[op.Key+"\x00"+string(op.Fence)])
		}
		h = append(h, porcupine.Operation{
			ClientId: op.Worker,
			Input: mutexOp{kind: op.Kind.String(), fence: fenceNum(op.Fence), outcome: op.Outcome, slots: slotsOf(op.Key),
				mode: modes[op.Key+"\x00"+string(op.Fence)]},
			Call:     call,
			Return:   ret,
			Metadata: op.Key,
		})
	}
	for _, g := range grants {
		call := g.ExpiresMs * int64(time.Millisecond)
		h = append(h, porcupine.Operation{
			ClientId: g.Worker,
			Input:    mutexOp{kind: "expire", fence: fenceNum(g.Fence), slots: slotsOf(g.Key), mode: g.Mode},
			Call:     call,
			Return:   max(call, nextReturn[g.Key+"\x00"+string(g.Fence)]),
			Metadata: g.Key,
		})
	}
	return h
}

// nextReturns bounds, by key and fence, when each lease can still end. On
// a lock key, the next grant's return bounds when an earlier lease can
// still end, and likewise for a writer of a read-write key. A slot of a
// limit, or a reader, can outlive later grants (they took other slots,
// or read beside it): only the end of the history bounds it.
func nextReturns(ops []Op, grants []Grant) map[string]int64 {
	var end int64
	for _, op := range ops {
		end = max(end, op.ReturnNs)
	}
	end++
	nextReturn := map[string]int64{} // key + fence -> return of the next grant by fence
	for key, gs := range byKey(grants) {
		sort.Slice(gs, func(i, j int) bool { return gs[i].Fence < gs[j].Fence })
		for i, g := range gs {
			bound := end
			if i+1 < len(gs) && g.Limit == 0 && g.Mode != "read" {
				bound = gs[i+1].ReturnNs
			}
			nextReturn[key+"\x00"+string(g.Fence)] = bound
		}
	}
	return nextReturn
}

// explain names the keys whose part of the illegal history h no order
// explains, and draws the first.
func (lin *Linearizability) explain(h []porcupine.Operation, timeout time.Duration) {
	for _, part := range mutexModel.Partition(h) {
		res, info := porcupine.CheckOperationsVerbose(mutexModel, part, timeout)
		if res != porcupine.Illegal {
			continue
		}
		lin.IllegalKeys = append(lin.IllegalKeys, lockdriver.HashKey(part[0].Metadata.(string)))
		if lin.Visualization == nil {
			var buf bytes.Buffer
			if porcupine.Visualize(mutexModel, info, &buf) == nil {
				lin.Visualization = buf.Bytes()
			}
		}
	}
}
