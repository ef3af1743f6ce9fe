package multilock

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// MaxKeys is the most keys one call takes. A group's keys are taken by one
// script that Redis runs alone: 64 keys keep it well under a millisecond,
// and a set larger than that is better served by a coarser key.
const MaxKeys = 64

// request is a validated call: its keys in the canonical order, where
// each came from, and its groups.
type request struct {
	s      store
	set    lock.Settings
	opts   []lock.Option
	keys   []string // normalised, sorted by (group, key)
	from   []int    // keys[i] is the caller's keys[from[i]]
	groups [][2]int // each group's [start, end) in keys, in order
}

// newRequest checks a call before any I/O: the context, the backend, the
// keys (none, a duplicate after NFC, more than MaxKeys, or one the
// backend refuses) and the options that do not apply to several keys.
func newRequest(ctx context.Context, op string, b lock.Backend, keys []string, opts []lock.Option) (*request, error) {
	switch {
	case ctx == nil:
		return nil, lockdriver.InvalidArgument(op, "nil context")
	case b == nil:
		return nil, lockdriver.InvalidArgument(op, "nil backend")
	case len(keys) == 0:
		return nil, lockdriver.InvalidArgument(op, "empty key list")
	case len(keys) > MaxKeys:
		return nil, lockdriver.InvalidArgument(op, strconv.Itoa(len(keys))+" keys: at most "+strconv.Itoa(MaxKeys))
	}
	set, err := lock.Resolve(b, opts...)
	if err != nil {
		return nil, err
	}
	if name := inapplicable(set); name != "" {
		return nil, lockdriver.InvalidArgument(op, name+" does not apply to a multi-key lock")
	}
	s, err := newStore(op, b)
	if err != nil {
		return nil, err
	}
	r := &request{s: s, set: set, opts: opts, keys: make([]string, len(keys)), from: make([]int, len(keys))}
	group := make(map[string]string, len(keys)) // key -> its group
	for i, key := range keys {
		norm, err := lockdriver.NormalizeKey(key)
		if err != nil {
			return nil, err
		}
		if _, dup := group[norm]; dup {
			return nil, lockdriver.InvalidArgument(op, "duplicate key at index "+strconv.Itoa(i)+" (after NFC)")
		}
		if group[norm], err = s.group(norm); err != nil {
			return nil, err
		}
		r.keys[i], r.from[i] = norm, i
	}
	r.sort(group)
	return r, nil
}

// inapplicable names the option of set that is about one key's lease, or
// returns "".
func inapplicable(set lock.Settings) string {
	switch {
	case set.Limit > 0:
		return "lock.WithLimit"
	case set.Lease != nil:
		return "lock.WithLease"
	case set.ReleaseFunc != nil:
		return "lock.WithReleaseFunc"
	case set.Watched:
		return "lock.WithWatch"
	}
	return ""
}

// sort puts the keys in the canonical order, by group then key, and marks
// the groups. Every caller orders every key alike, so two callers never
// wait for each other's keys in opposite orders.
func (r *request) sort(group map[string]string) {
	idx := make([]int, len(r.keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(group[r.keys[a]], group[r.keys[b]]), cmp.Compare(r.keys[a], r.keys[b]))
	})
	keys, from := make([]string, len(idx)), make([]int, len(idx))
	for i, j := range idx {
		keys[i], from[i] = r.keys[j], r.from[j]
	}
	r.keys, r.from = keys, from
	start := 0
	for i := 1; i <= len(keys); i++ {
		if i == len(keys) || group[keys[i]] != group[keys[start]] {
			r.groups = append(r.groups, [2]int{start, i})
			start = i
		}
	}
}

// acquisition is one call's progress: the leases held and the lock ids
// of every key, in the canonical order.
type acquisition struct {
	*request
	leases   []lock.Lease
	ids      []string
	keeps    []*kept // the heartbeat of each lease held
	deadline time.Time
}

// take acquires every key, group after group in the canonical order. When
// a key is busy it waits for that key alone, with lock.Acquire (in its
// queue, with hand-offs, as a plain lock waits), holding only keys before
// it in the order, so no two callers ever wait for each other. It then
// tries the group again, with the lease it waited for counting as taken.
// Every lease is kept alive from the moment it is taken; one lost on the
// way is taken again, from its group on. On failure it releases
// everything it took.
func (a *acquisition) take(ctx context.Context) error {
	n := len(a.keys)
	a.leases, a.ids, a.keeps = make([]lock.Lease, n), make([]string, n), make([]*kept, n)
	a.deadline = time.Now().Add(a.set.Wait)
	for g := 0; g <= len(a.groups); {
		if i := a.firstLost(n); i >= 0 {
			if err := a.lost(i); err != nil {
				return a.fail(ctx, 0, 0, err)
			}
			g = a.groupOf(i)
			continue
		}
		if g == len(a.groups) {
			return nil
		}
		lo, hi := a.groups[g][0], a.groups[g][1]
		if err := a.newIDs(lo, hi); err != nil {
			return a.fail(ctx, lo, hi, err)
		}
		got, err := a.attempt(ctx, lo, hi)
		if err == nil {
			for i, l := range got {
				a.hold(ctx, lo+i, l)
			}
			g++
			continue
		}
		var busy *BusyError
		switch {
		case errors.As(err, &busy) && busy.Index >= 0 && busy.Index < hi-lo:
			err = a.waitFor(ctx, lo+busy.Index, busy, lo, hi)
		case lock.CodeOf(err).Transient() && a.set.BackendTimeout == 0:
			err = a.pause(ctx, err) // same ids: the next attempt gets back what this one took
		}
		if err != nil {
			return a.fail(ctx, lo, hi, err)
		}
	}
	return nil
}

// attempt makes one attempt on the group [lo, hi), bounded by
// lock.WithBackendTimeout when set.
func (a *acquisition) attempt(ctx context.Context, lo, hi int) ([]lock.Lease, error) {
	if d := a.set.BackendTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	got, err := a.s.acquire(ctx, a.keys[lo:hi], a.ids[lo:hi], a.leases[lo:hi], a.set.TTL, a.set.ReleaseTimeout)
	if err == nil && len(got) != hi-lo {
		err = &lock.Error{Code: lock.CodeInternal, Op: "acquire", Msg: "the backend returned " + strconv.Itoa(len(got)) + " leases for " + strconv.Itoa(hi-lo) + " keys"}
	}
	return got, err
}

// newIDs gives a lock id to every key of [lo, hi) that has none.
func (a *acquisition) newIDs(lo, hi int) error {
	for i := lo; i < hi; i++ {
		if a.ids[i] != "" {
			continue
		}
		id, err := a.s.id.NewLockID(a.keys[i])
		if err != nil {
			return err
		}
		a.ids[i] = id
	}
	return nil
}

// waitFor waits for the busy key j, found by an attempt on the group
// [lo, hi). It first releases the keys after j that it holds, then takes
// j with lock.Acquire for what is left of the wait. The keys of the group
// it does not hold get new ids: a backend without AcquireMulti released
// theirs.
func (a *acquisition) waitFor(ctx context.Context, j int, busy *BusyError, lo, hi int) error {
	a.releaseRange(ctx, j+1, len(a.keys))
	for i := lo; i < hi; i++ {
		if a.leases[i].ID == "" {
			a.ids[i] = ""
		}
	}
	left := time.Until(a.deadline)
	if left <= 0 {
		return &lock.Error{Code: lock.CodeAcquisitionTimeout, Op: "acquire", Msg: "a key stayed locked", Err: busy.Unwrap()}
	}
	l, err := lock.Acquire(ctx, a.s.b, a.keys[j], append(a.opts[:len(a.opts):len(a.opts)], lock.WithWait(left))...)
	if err != nil {
		return err
	}
	a.hold(ctx, j, l)
	return nil
}

// lost forgets the lease of key i, lost while the acquisition went on, so
// that its group is taken again; or, when the wait is over, returns the
// error of an acquisition that gave up.
func (a *acquisition) lost(i int) error {
	a.drop(i)
	if time.Until(a.deadline) <= 0 {
		return &lock.Error{Code: lock.CodeAcquisitionTimeout, Op: "acquire", Msg: "a lease taken on the way was lost", Err: &lock.LockedError{}}
	}
	return nil
}

// pause waits before another attempt after the transient error err, or
// returns err when the wait is over.
func (a *acquisition) pause(ctx context.Context, err error) error {
	d := min(a.set.Retry.BaseDelay, time.Until(a.deadline))
	if d <= 0 {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return &lock.Error{Code: lock.CodeAborted, Op: "acquire", Msg: "context done", Err: ctx.Err()}
	case <-t.C:
		return nil
	}
}

// fail releases what the acquisition took, and the ids of the group
// [lo, hi) that err may have taken, and returns err.
func (a *acquisition) fail(ctx context.Context, lo, hi int, err error) error {
	if !errors.Is(err, lock.ErrLocked) && lock.CodeOf(err) != lock.CodeInvalidArgument {
		for i := lo; i < hi; i++ {
			if a.leases[i].ID == "" && a.ids[i] != "" {
				a.leases[i] = lock.Lease{Key: a.keys[i], ID: a.ids[i], TTL: a.set.TTL}
			}
		}
	}
	a.releaseRange(ctx, 0, len(a.keys))
	return err
}

// releaseRange releases the leases held among keys [lo, hi), within the
// release timeout; what it cannot release ends by its TTL. It waits for
// the release until ctx ends, so a call returns by its deadline, as
// lock.Acquire does; the release goes on in the background.
func (a *acquisition) releaseRange(ctx context.Context, lo, hi int) {
	var held []lock.Lease
	for i := lo; i < hi; i++ {
		if a.leases[i].ID != "" {
			held = append(held, a.leases[i])
		}
		if a.keeps[i] != nil {
			a.drop(i)
		} else {
			a.leases[i] = lock.Lease{}
		}
	}
	a.s.releaseWithin(ctx, held, a.set.ReleaseTimeout)
}

// inOrder returns the leases in the caller's order of keys.
func (a *acquisition) inOrder() []lock.Lease {
	out := make([]lock.Lease, len(a.leases))
	for i, l := range a.leases {
		out[a.from[i]] = l
	}
	return out
}
