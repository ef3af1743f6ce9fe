package election

import (
	"context"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// A watcher follows the term of one key for the observers and candidates
// of a Backend in the process. On a Store it reads the key when a term
// expires unannounced, settleDelay after a term ended, and when notices
// may have been missed. Elsewhere it reads the key at each term's expiry,
// and every pollInterval while nobody leads.

const (
	// settleDelay is how long a watcher waits for the next term's notice
	// after a term ended, before it reads the key.
	settleDelay = 100 * time.Millisecond
	// pollInterval is how often a watcher without notices reads a free
	// key, and the wait after a failed read.
	pollInterval = lockdriver.QueuedPollInterval
	// lookupTimeout bounds one read of the key.
	lookupTimeout = 5 * time.Second
)

// follower is one observer or candidate of a watcher.
type follower struct {
	w    *watcher
	wake chan struct{} // capacity 1: the term changed
	log  bool          // keep the changes in pending (an observer)
	// pending: the changes not yet taken, under w.mu.
	pending []Leader
}

// watcher is the shared follower of one key's term.
type watcher struct {
	b     lock.Backend
	key   string
	norm  string    // key, normalised: its name in reg
	reg   *watchers // where it is registered
	refs  int       // under set.mu
	stop  context.CancelFunc
	done  chan struct{} // closed when run returns
	inbox chan struct{} // capacity 1: notices arrived

	// Used by run's goroutine only.
	store    bool   // b is (or wraps) a Store: Lead's terms have owners
	watching bool   // the Store's notices arrive
	unowned  Leader // the first read of a new term found without its owner, held back

	mu        sync.Mutex
	cur       Leader // the term as last known; zero Fence: nobody leads
	known     bool   // cur was read or announced at least once
	notices   []notice
	followers map[*follower]struct{}
}

// notice is one notice from Store.Watch.
type notice struct {
	fence    lock.Fence
	exp      time.Time
	identity string
}

// watchers are the watchers of one Backend, by normalised key.
type watchers struct {
	mu sync.Mutex
	m  map[string]*watcher
}

// watchersKey names the watchers in a Backend's lock.Locals.
type watchersKey struct{}

// watchersOf returns the watchers in b's Locals, or new ones.
func watchersOf(b lock.Backend) *watchers {
	newWatchers := func() any { return &watchers{m: map[string]*watcher{}} }
	if h, ok := b.(interface{ Locals() *lock.Locals }); ok {
		if loc := h.Locals(); loc != nil {
			return loc.Load(watchersKey{}, newWatchers).(*watchers)
		}
	}
	return newWatchers().(*watchers)
}

// follow returns a follower of key's term on b, sharing b's watcher of
// key; leave detaches it.
func follow(b lock.Backend, key string, log bool) (f *follower, leave func()) {
	norm, _ := lockdriver.NormalizeKey(key) // validated by the caller
	ws := watchersOf(b)
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[norm]
	if w == nil {
		w = &watcher{b: b, key: key, norm: norm, reg: ws, done: make(chan struct{}), inbox: make(chan struct{}, 1), followers: map[*follower]struct{}{}}
		ctx, cancel := context.WithCancel(context.Background())
		w.stop = cancel
		ws.m[norm] = w
		go func() {
			defer close(w.done)
			w.run(ctx)
		}()
	}
	w.refs++
	f = &follower{w: w, wake: make(chan struct{}, 1), log: log}
	w.mu.Lock()
	w.followers[f] = struct{}{}
	if log && w.known {
		f.pending = append(f.pending, w.cur)
		f.wake <- struct{}{}
	}
	w.mu.Unlock()
	return f, func() { w.leave(f) }
}

// leave detaches f; the last follower stops the watcher and waits for
// its goroutine.
func (w *watcher) leave(f *follower) {
	w.mu.Lock()
	delete(w.followers, f)
	w.mu.Unlock()
	w.reg.mu.Lock()
	w.refs--
	last := w.refs == 0
	if last {
		delete(w.reg.m, w.norm)
		w.stop()
	}
	w.reg.mu.Unlock()
	if last {
		<-w.done
	}
}

// state returns the term as last known, and whether it was ever known.
func (f *follower) state() (Leader, bool) { return f.w.state() }

// take returns the changes f has not taken yet.
func (f *follower) take() []Leader {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	p := f.pending
	f.pending = nil
	return p
}

// notify is the Store's notice function: it queues the notice for run.
func (w *watcher) notify(fence lock.Fence, exp time.Time, identity string) {
	w.mu.Lock()
	w.notices = append(w.notices, notice{fence: fence, exp: exp, identity: identity})
	w.mu.Unlock()
	select {
	case w.inbox <- struct{}{}:
	default:
	}
}

// set makes l the known term and wakes the followers; a change of term
// goes to the observers' logs.
func (w *watcher) set(l Leader) {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := !w.known || l.Fence != w.cur.Fence
	if !changed && l.Identity == "" {
		l.Identity = w.cur.Identity // a read before the owner was stored
	}
	w.cur, w.known = l, true
	for f := range w.followers {
		if changed && f.log {
			f.pending = append(f.pending, l)
		}
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}
