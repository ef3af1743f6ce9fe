package election

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// run follows the term until ctx ends: it subscribes to the Store's
// notices when it can, reads the key once, and then as the type's comment
// says.
func (w *watcher) run(ctx context.Context) {
	if s := storeOf(w.b); s != nil {
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
			ok, again := w.read(ctx)
			if !again {
				timer.Reset(w.next(ok))
			} else {
				timer.Reset(settleDelay)
			}
		}
	}
}

// apply takes the queued notices in: a newer or the current term updates
// the known term; read asks for a read of the key at once (notices may
// have been missed), settle for one after settleDelay (the known term
// ended); moved tells a live term's notice was taken in.
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
			// An ended term: only the known one matters (a newer one may
			// have been announced before its predecessor's end).
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

// read reads the key and makes what it finds the known term; it reports
// whether the read succeeded. A new term found with no owner, when
// watching, is read again once after settleDelay (again) rather than
// reported: its leader proclaims it within a round trip or two, and its
// notice makes the read unnecessary.
func (w *watcher) read(ctx context.Context) (ok, again bool) {
	rctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	l, err := lookup(rctx, w.b, w.key)
	if err != nil {
		return false, false
	}
	if cur, _ := w.state(); w.watching && l.Identity == "" && l.Fence != "" && l.Fence != cur.Fence && l.Fence != w.unowned {
		w.unowned = l.Fence
		return true, true
	}
	w.set(l)
	return true, false
}

// next is the wait until the next read: after the known term's expiry
// plus the clock tolerance (notices, when watching, move it on); while
// nobody leads, none when watching (a new term is announced), else
// pollInterval; pollInterval after a failed read.
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
