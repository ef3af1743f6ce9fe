package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

// releaseRW is release --force on a read-write lock (lock/rwlock): it
// evicts its writer, or the readers --all or --slot names, by their fences
// (admin.ForceReleaseRW), so never a holder the operator did not see and
// confirm: a writer granted since the read is not released by --all.
func releaseRW(ctx context.Context, s *session, o *options, st *state) error {
	picked, err := pickHolders(o, st)
	if err != nil {
		return err
	}
	if err := s.confirm(o, holdersQuestion(st, picked)); err != nil {
		return err
	}
	fences := make([]lock.Fence, len(picked))
	for i, h := range picked {
		fences[i] = h.Fence
	}
	info, err := admin.ForceReleaseRW(ctx, s.backend, st.Key, fences...)
	switch {
	case errors.Is(err, lock.ErrNotHeld):
		return failf("%s: the holders were released or expired meanwhile: nothing released", display(st.Key))
	case err != nil && info == nil:
		return failf("%s", message(err))
	}
	w := s.env.Stdout
	released := info.Readers
	what := count(int64(len(released)), "reader")
	if info.Writer != nil {
		released, what = append(released, *info.Writer), "the writer"
	}
	fmt.Fprintf(w, "released %s of %s\n", what, display(st.Key))
	st.printRequest(w)
	for _, h := range released {
		role := "reader"
		if info.Writer != nil && h.Fence == info.Writer.Fence {
			role = "writer"
		}
		fmt.Fprintf(w, "  removed  %s fence %s (holder %s, acquired %s) and its index key\n",
			role, h.Fence, h.IDHash, timestamp(h.AcquiredAt))
	}
	s.printKept(ctx, st.FenceKey)
	if err != nil { // a release failed after others succeeded
		return failf("%s: released %d of %d holders, then: %s", display(st.Key), len(released), len(picked), message(err))
	}
	s.printSlotsNow(ctx, st, highestFence(st.Limit.Holders))
	return nil
}

// pickHolders returns the holders of st's read-write lock that release
// evicts: its writer (or --all), or the readers --all or --slot names.
func pickHolders(o *options, st *state) ([]slotRow, error) {
	l := st.Limit
	switch {
	case o.all || (o.slot == "" && l.rwWriter()):
		return l.Holders, nil
	case o.slot == "":
		return nil, usageErrorf("%s is a read-write lock %s: add --all to release every reader, "+
			"or --slot FENCE for one (syncguard show %s lists them)", display(st.Key), l.rwState(), display(st.Key))
	}
	fence, _ := parseSlotFence(o.slot) // checked before any I/O
	picked := withFence(l.Holders, fence)
	if len(picked) == 0 {
		return nil, failf("no live holder of %s has fence %s: nothing released (syncguard show %s lists them)",
			display(st.Key), fence, display(st.Key))
	}
	return picked, nil
}

// holdersQuestion asks the operator to confirm the release of picked.
func holdersQuestion(st *state, picked []slotRow) string {
	var q strings.Builder
	fmt.Fprintf(&q, "%s is a read-write lock %s. Release:\n", display(st.Key), st.Limit.rwState())
	for _, h := range picked {
		fmt.Fprintf(&q, "  %s fence %s, holder %s, for %s, %s left\n", roleName(h.Mode), h.Fence, h.Holder,
			duration(ms(h.AgeMs)), duration(ms(h.TTLMs)))
	}
	q.WriteString("Holders are not told and may go on with stale fences (a writer's writes, a reader's values). [y/N] ")
	return q.String()
}

// roleName is "writer" or "reader" for a read-write lock holder's mode.
func roleName(mode string) string {
	if mode == "write" {
		return "writer"
	}
	return "reader"
}
