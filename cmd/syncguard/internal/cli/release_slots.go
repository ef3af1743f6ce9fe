package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

// releaseSlots is release --force on a concurrency limit: it evicts the
// slots --all or --slot names (redisbackend.Backend.ForceReleaseSlots),
// and never more than the operator saw and confirmed.
func releaseSlots(ctx context.Context, s *session, o *options, st *state) error {
	fence, picked, err := pickSlots(o, st)
	if err != nil {
		return err
	}
	if err := s.confirm(o, slotsQuestion(st, picked)); err != nil {
		return err
	}
	infos, err := admin.ForceReleaseSlots(ctx, s.backend, st.Key, fence)
	switch {
	case errors.Is(err, lock.ErrNotHeld):
		return failf("%s: the slots were released or expired meanwhile: nothing released", display(st.Key))
	case err != nil && len(infos) == 0:
		return failf("%s", message(err))
	}
	w := s.env.Stdout
	fmt.Fprintf(w, "released %s of %s\n", count(int64(len(infos)), "slot"), display(st.Key))
	st.printRequest(w)
	for _, info := range infos {
		fmt.Fprintf(w, "  removed  slot fence %s (holder %s, acquired %s) and its index key\n",
			info.Fence, info.IDHash, timestamp(info.AcquiredAt))
	}
	s.printKept(ctx, st.FenceKey)
	if err != nil { // a release failed after others succeeded
		return failf("%s: released %d of %d slots, then: %s", display(st.Key), len(infos), len(picked), message(err))
	}
	s.printSlotsNow(ctx, st, highestFence(st.Limit.Holders))
	return nil
}

// pickSlots returns the slots of st's limit that --all or --slot names,
// and the fence of --slot (zero with --all).
func pickSlots(o *options, st *state) (lock.Fence, []slotRow, error) {
	lim := st.Limit
	if !o.all && o.slot == "" {
		return "", nil, usageErrorf("%s is a concurrency limit with %d of %d slots held: add --all to release every slot, "+
			"or --slot FENCE for one (syncguard show %s lists them)", display(st.Key), len(lim.Holders), lim.N, display(st.Key))
	}
	if o.slot == "" {
		return "", lim.Holders, nil
	}
	fence, _ := parseSlotFence(o.slot) // checked before any I/O
	picked := withFence(lim.Holders, fence)
	if len(picked) == 0 {
		return fence, nil, failf("no live slot of %s has fence %s: nothing released (syncguard show %s lists them)",
			display(st.Key), fence, display(st.Key))
	}
	return fence, picked, nil
}

// withFence is the slots of slots with fence.
func withFence(slots []slotRow, fence lock.Fence) []slotRow {
	var picked []slotRow
	for _, h := range slots {
		if h.Fence == fence {
			picked = append(picked, h)
		}
	}
	return picked
}

// slotsQuestion asks the operator to confirm the release of picked.
func slotsQuestion(st *state, picked []slotRow) string {
	var q strings.Builder
	fmt.Fprintf(&q, "%s is a concurrency limit with %d of %d slots held. Release %s:\n",
		display(st.Key), len(st.Limit.Holders), st.Limit.N, count(int64(len(picked)), "slot"))
	for _, h := range picked {
		fmt.Fprintf(&q, "  fence %s, holder %s, for %s, %s left\n", h.Fence, h.Holder, duration(ms(h.AgeMs)), duration(ms(h.TTLMs)))
	}
	q.WriteString("Their holders are not told and may go on writing with stale fences. [y/N] ")
	return q.String()
}

// highestFence is the highest fence of the slots.
func highestFence(slots []slotRow) lock.Fence {
	var highest lock.Fence
	for _, h := range slots {
		if h.Fence.Compare(highest) > 0 {
			highest = h.Fence
		}
	}
	return highest
}

// printSlotsNow reads the limit or read-write lock of st again and says
// how many slots are held (or by whom the read-write lock is), and how
// many were granted since the fence highest: a release hands its slot to
// the oldest waiter whose n admits it, a read-write lock to its oldest
// waiters.
func (s *session) printSlotsNow(ctx context.Context, st *state, highest lock.Fence) {
	w := s.env.Stdout
	after, err := s.read(ctx, st.Key)
	switch {
	case err != nil:
		fmt.Fprintf(w, "  now      unknown: %s\n", message(err))
	case after.Limit == nil && st.Limit.ReadWrite:
		fmt.Fprintf(w, "  now      free (waiters that poll take it at their next attempt)\n")
	case after.Limit == nil:
		fmt.Fprintf(w, "  now      free (waiters that poll take a slot at their next attempt)\n")
	default:
		granted := 0
		for _, h := range after.Limit.Holders {
			if h.Fence.Compare(highest) > 0 {
				granted++
			}
		}
		if after.Limit.ReadWrite {
			fmt.Fprintf(w, "  now      %s", after.Limit.rwState())
		} else {
			fmt.Fprintf(w, "  now      %d of %d slots held", len(after.Limit.Holders), after.Limit.N)
		}
		if granted > 0 {
			fmt.Fprintf(w, ", %d granted since (handed on to waiters, as a release does)", granted)
		}
		fmt.Fprintln(w)
	}
}
