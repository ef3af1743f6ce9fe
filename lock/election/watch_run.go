package election

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// run follows the term until ctx ends, as the type's comment says.
func (w *watcher) run(ctx context.Context) {
	if s := storeOf(w.b); s != nil {
		w.store = true
		if unwatch, err := s.Watch(w.key, w.notify); err == nil {
			defer unwatch()
			w.watching = true
		}
	}
	timer := time.NewTimer(0) // the first read
	defer timer.Stop()
	var ended bool // the known term ended: read the key when timer fires
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.inbox:
			read, settle, moved := w.apply()
			ended = settle || (ended && !moved)
			switch {
			case read:
				timer.Reset(0)
			case settle:
				timer.Reset(settleDelay)
			case !ended:
				timer.Reset(w.next(true))
			}
		case <-timer.C:
			ended = false
			ok, heldBack := w.read(ctx)
			if heldBack > 0 {
				timer.Reset(heldBack)
			} else {
				timer.Reset(w.next(ok))
			}
		}
	}
}

// apply takes the queued notices in. read asks for a read at once, settle
// for one after settleDelay; moved tells a live term's notice came.
func (w *watcher) apply() (read, settle, moved bool) {
	w.mu.Lock()
	ns := w.notices
	w.notices = nil
	cur, known := w.cur, w.known
	w.mu.Unlock()
	for _, n := range ns {
		switch {
		case n.fence == "":
			read = true
		case n.exp.IsZero():
			// An ended term: only the known one matters.
			settle = settle || (known && n.fence == cur.Fence)
		case !known || n.fence >= cur.Fence:
			// Fences are fixed-width decimals: string order is their order.
			cur, known = Leader{Identity: n.identity, Fence: n.fence, ExpiresAt: n.exp}, true
			settle, moved = false, true
			w.set(cur)
		}
	}
	return read, settle, moved
}

// read reads the key and makes what it finds the known term; ok tells
// the read succeeded. On a Store, a new term without its owner is held
// back until heldBack has passed: its leader's notice will name it. One a
// later read finds extended and still unowned is a plain lock's lease.
func (w *watcher) read(ctx context.Context) (ok bool, heldBack time.Duration) {
	rctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	l, err := lookup(rctx, w.b, w.key)
	if err != nil {
		return false, 0
	}
	if cur, _ := w.state(); w.store && l.Identity == "" && l.Fence != "" && l.Fence != cur.Fence {
		if l.Fence != w.unowned.Fence || !l.ExpiresAt.After(w.unowned.ExpiresAt) {
			if l.Fence != w.unowned.Fence {
				w.unowned = l
			}
			return true, max(time.Until(l.ExpiresAt)+lockdriver.TimeTolerance, settleDelay)
		}
	}
	w.set(l)
	return true, 0
}

// next is the wait until the next read: the known term's expiry plus the
// clock tolerance; while nobody leads, none when watching, else
// pollInterval.
func (w *watcher) next(ok bool) time.Duration {
	cur, known := w.state()
	switch {
	case !ok || !known:
		return pollInterval
	case cur.Fence != "":
		return max(time.Until(cur.ExpiresAt)+lockdriver.TimeTolerance, 0)
	case w.watching:
		return 24 * time.Hour
	default:
		return pollInterval
	}
}

// state returns the term as last known, and whether it was ever known.
func (w *watcher) state() (Leader, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur, w.known
}
