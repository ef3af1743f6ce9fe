package asynqlock

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

// manifestTTL is how long a term's manifest of its entries is kept after
// its last change.
const manifestTTL = 30 * 24 * time.Hour

// syncManifest compares entries with the manifest the last term stored
// and reports each difference; a term stores its own when it starts and
// when its entries change. Failures are not the term's: they are left.
func (s *Scheduler) syncManifest(ctx context.Context, fence lock.Fence, entries map[string]*entry, start bool, onTick func(Tick)) {
	ctx, cancel := context.WithTimeout(ctx, s.ttl)
	defer cancel()
	key := wire.ScheduleManifestKey(s.key)
	l, err := s.b.Acquire(ctx, key, s.ttl)
	if err != nil {
		return
	}
	if start {
		if b, found, err := s.b.Record(ctx, key); err == nil && found {
			if theirs, err := wire.DecodeScheduleManifest(b); err == nil {
				s.reportDiffs(theirs, entries, onTick)
			}
		}
	}
	mine := &wire.ScheduleManifest{Fence: fence, Identity: s.identity}
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		mine.Entries = append(mine.Entries, wire.ScheduleEntry{ID: id, Content: entries[id].content})
	}
	_ = s.b.ReleaseRecord(ctx, l, mine.Encode(), manifestTTL)
}

// compareManifest reports how this replica's entries differ from those
// of the manifest stored by the last term, if any (a starting Run).
func (s *Scheduler) compareManifest(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.ttl)
	defer cancel()
	b, found, err := s.b.Record(ctx, wire.ScheduleManifestKey(s.key))
	if err != nil || !found {
		return
	}
	theirs, err := wire.DecodeScheduleManifest(b)
	if err != nil {
		return
	}
	entries, onTick := s.snapshot()
	s.reportDiffs(theirs, entries, onTick)
}

// reportDiffs reports each entry that entries and the manifest theirs do
// not have alike, as a Tick of kind TickEntriesDiffer.
func (s *Scheduler) reportDiffs(theirs *wire.ScheduleManifest, entries map[string]*entry, onTick func(Tick)) {
	seen := map[string]bool{}
	diff := func(id, how string) {
		tk := Tick{Kind: TickEntriesDiffer, EntryID: id, Fence: theirs.Fence,
			Err: fmt.Errorf("%w: entry %q %s (leader %q, term %s)", ErrEntriesDiffer, id, how, theirs.Identity, theirs.Fence)}
		s.metrics.tick(tk)
		callOnTick(onTick, tk)
	}
	for _, te := range theirs.Entries {
		seen[te.ID] = true
		switch e, ok := entries[te.ID]; {
		case !ok:
			diff(te.ID, "is registered by the leader, not here")
		case e.content != te.Content:
			diff(te.ID, "is registered otherwise by the leader (spec, task, options or catch-up)")
		}
	}
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		if !seen[id] {
			diff(id, "is registered here, not by the leader")
		}
	}
}
