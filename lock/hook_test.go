package lock_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// hookFunc adapts a function to a lock.Hook.
type hookFunc func(next lock.OpFunc) lock.OpFunc

func (f hookFunc) Operation(next lock.OpFunc) lock.OpFunc { return f(next) }

// passHook is a Hook that passes every operation on unchanged.
func passHook() lock.Hook {
	return hookFunc(func(next lock.OpFunc) lock.OpFunc { return next })
}

// markKey is the context key of the value markHook adds.
type markKey struct{}

// markHook passes every operation of a kind in kinds (every one when kinds
// is empty) on under a context that carries mark, so a test can tell which
// calls ran under the context a hook gave next.
func markHook(mark string, kinds ...lock.OpKind) lock.Hook {
	return hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			if len(kinds) == 0 || slices.Contains(kinds, op.Kind) {
				ctx = context.WithValue(ctx, markKey{}, mark)
			}
			return next(ctx, op)
		}
	})
}

// loggedOp is one operation an opLog saw.
type loggedOp struct {
	op     lock.Op // as next left it: arguments and results
	err    error   // what next returned
	mark   any     // the markKey value of the context the hook was given
	closed bool    // next has returned
}

// opLog is a Hook that records every operation and event it sees, in the
// order they start, each with its results once next has returned.
type opLog struct {
	mu  sync.Mutex
	ops []*loggedOp
}

func (l *opLog) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		e := &loggedOp{mark: ctx.Value(markKey{})}
		l.mu.Lock()
		l.ops = append(l.ops, e)
		l.mu.Unlock()
		err := next(ctx, op)
		l.mu.Lock()
		e.op, e.err, e.closed = *op, err, true
		l.mu.Unlock()
		return err
	}
}

// entries returns a copy of what l saw.
func (l *opLog) entries() []loggedOp {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]loggedOp, len(l.ops))
	for i, e := range l.ops {
		out[i] = *e
	}
	return out
}

// kinds returns the kinds of what l saw, in order.
func (l *opLog) kinds() []lock.OpKind {
	var ks []lock.OpKind
	for _, e := range l.entries() {
		ks = append(ks, e.op.Kind)
	}
	return ks
}

// only returns what l saw of kind k.
func (l *opLog) only(k lock.OpKind) []loggedOp {
	var out []loggedOp
	for _, e := range l.entries() {
		if e.op.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// wantOps fails the test unless l saw exactly the operations want, in
// order, each finished with these exported fields.
func (l *opLog) wantOps(t *testing.T, want []lock.Op) {
	t.Helper()
	got := l.entries()
	if len(got) != len(want) {
		t.Fatalf("the hook saw %v, want %d operations", l.kinds(), len(want))
	}
	for i, e := range got {
		if !e.closed {
			t.Errorf("operation %d (%v): next has not returned", i, e.op.Kind)
		}
		for _, d := range diffOp(e.op, want[i]) {
			t.Errorf("operation %d (%v): %s", i, want[i].Kind, d)
		}
	}
}

// diffOp lists the exported fields in which got differs from want.
func diffOp(got, want lock.Op) []string {
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	var diffs []string
	for i := range gv.NumField() {
		f := gv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if !reflect.DeepEqual(g, w) {
			diffs = append(diffs, fmt.Sprintf("%s = %+v, want %+v", f.Name, g, w))
		}
	}
	return diffs
}

// trace is an ordered record of the hooks entering and leaving operations.
type trace struct {
	mu    sync.Mutex
	lines []string
}

// hook returns a Hook that writes "name>kind" to tr before next and
// "name<kind" after.
func (tr *trace) hook(name string) lock.Hook {
	return hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			tr.add(name + ">" + op.Kind.String())
			err := next(ctx, op)
			tr.add(name + "<" + op.Kind.String())
			return err
		}
	})
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	tr.lines = append(tr.lines, s)
	tr.mu.Unlock()
}

func (tr *trace) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Join(tr.lines, " ")
}

// The canned results of stub.
var (
	stubExpiry = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	stubLease  = lock.Lease{Key: "stub", ID: "stubstubstubstubstubst", Fence: "000000000000042", TTL: time.Minute, ExpiresAt: stubExpiry}
	stubInfo   = &lock.Info{KeyHash: "key-hash", IDHash: "id-hash", Fence: "000000000000042", ExpiresAt: stubExpiry}
	stubLimit  = &lock.LimitInfo{KeyHash: "key-hash", Limit: 3, Holders: []lock.Info{*stubInfo}}
	stubRecord = []byte("recorded")
	stubCaps   = lock.Capabilities{Backend: "stub", Fencing: true, TimeAuthority: "server"}
)

// stub is a lock.IDBackend and lock.Recorder that does no work: every
// method records its call and returns canned results, with err as its
// error when set, so a test sees exactly what reaches the backend.
type stub struct {
	err   error
	grant bool // Join's waiter has a hand-off waiting in Granted

	mu    sync.Mutex
	calls []stubCall
}

var (
	_ lock.IDBackend = (*stub)(nil)
	_ lock.Recorder  = (*stub)(nil)
)

// stubCall is one call of a stub method with its arguments.
type stubCall struct {
	Method     string
	Key, ID    string
	N          int
	TTL, Wait  time.Duration
	Lease      lock.Lease
	Record     []byte
	Reqs       []lock.Lease
	Took       bool
	Mark       any // the markKey value of the call's context
	NilContext bool
}

func (s *stub) record(ctx context.Context, c stubCall) {
	if ctx != nil {
		c.Mark = ctx.Value(markKey{})
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

// reached returns the calls made so far.
func (s *stub) reached() []stubCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func (s *stub) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	s.record(ctx, stubCall{Method: "Acquire", Key: key, TTL: ttl})
	return s.lease()
}

func (s *stub) lease() (lock.Lease, error) {
	if s.err != nil {
		return lock.Lease{}, s.err
	}
	return stubLease, nil
}

func (s *stub) Release(ctx context.Context, id string) error {
	s.record(ctx, stubCall{Method: "Release", ID: id})
	return s.err
}

func (s *stub) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	s.record(ctx, stubCall{Method: "Extend", ID: id, TTL: ttl})
	if s.err != nil {
		return time.Time{}, s.err
	}
	return stubExpiry, nil
}

func (s *stub) IsLocked(ctx context.Context, key string) (bool, error) {
	s.record(ctx, stubCall{Method: "IsLocked", Key: key})
	return s.err == nil, s.err
}

func (s *stub) LookupKey(ctx context.Context, key string) (*lock.Info, error) {
	s.record(ctx, stubCall{Method: "LookupKey", Key: key})
	if s.err != nil {
		return nil, s.err
	}
	return stubInfo, nil
}

func (s *stub) LookupID(ctx context.Context, id string) (*lock.Info, error) {
	s.record(ctx, stubCall{Method: "LookupID", ID: id})
	if s.err != nil {
		return nil, s.err
	}
	return stubInfo, nil
}

func (s *stub) Capabilities() lock.Capabilities { return stubCaps }

func (s *stub) NewLockID(key string) (string, error) {
	s.record(nil, stubCall{Method: "NewLockID", Key: key, NilContext: true})
	return lockdriver.NewLockID(), nil
}

func (s *stub) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error) {
	s.record(ctx, stubCall{Method: "AcquireID", Key: key, ID: id, TTL: ttl})
	return s.lease()
}

func (s *stub) AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (lock.Lease, error) {
	s.record(ctx, stubCall{Method: "AcquireSlot", Key: key, ID: id, N: n, TTL: ttl})
	return s.lease()
}

func (s *stub) LookupLimit(ctx context.Context, key string) (*lock.LimitInfo, error) {
	s.record(ctx, stubCall{Method: "LookupLimit", Key: key})
	if s.err != nil {
		return nil, s.err
	}
	return stubLimit, nil
}

func (s *stub) Join(key, id string, n int, ttl, wait time.Duration) (lock.Waiter, error) {
	s.record(nil, stubCall{Method: "Join", Key: key, ID: id, N: n, TTL: ttl, Wait: wait, NilContext: true})
	w := &stubWaiter{s: s, granted: make(chan lock.Lease, 1)}
	if s.grant {
		w.granted <- lock.Lease{Key: key, ID: id, Fence: "000000000000043", TTL: ttl, ExpiresAt: stubExpiry}
	}
	return w, nil
}

func (s *stub) ExtendBatch(ctx context.Context, reqs []lock.Lease) []lock.ExtendResult {
	s.record(ctx, stubCall{Method: "ExtendBatch", Reqs: reqs})
	res := make([]lock.ExtendResult, len(reqs))
	for i := range res {
		res[i] = lock.ExtendResult{ExpiresAt: stubExpiry.Add(time.Duration(i) * time.Second), Err: s.err}
	}
	return res
}

func (s *stub) ReleaseDone(ctx context.Context, l lock.Lease, doneTTL time.Duration) error {
	s.record(ctx, stubCall{Method: "ReleaseDone", Lease: l, TTL: doneTTL})
	return s.err
}

func (s *stub) IsDone(ctx context.Context, key string) (bool, error) {
	s.record(ctx, stubCall{Method: "IsDone", Key: key})
	return s.err == nil, s.err
}

func (s *stub) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	s.record(ctx, stubCall{Method: "ReleaseRecord", Lease: l, Record: record, TTL: ttl})
	return s.err
}

func (s *stub) AcquireDone(ctx context.Context, key string, ttl time.Duration) (lock.Lease, bool, error) {
	s.record(ctx, stubCall{Method: "AcquireDone", Key: key, TTL: ttl})
	return lock.Lease{}, s.err == nil, s.err
}

func (s *stub) AcquireRecord(ctx context.Context, key string, ttl time.Duration) (lock.Lease, []byte, error) {
	s.record(ctx, stubCall{Method: "AcquireRecord", Key: key, TTL: ttl})
	if s.err != nil {
		return lock.Lease{}, nil, s.err
	}
	return lock.Lease{}, stubRecord, nil
}

func (s *stub) Record(ctx context.Context, key string) ([]byte, bool, error) {
	s.record(ctx, stubCall{Method: "Record", Key: key})
	if s.err != nil {
		return nil, false, s.err
	}
	return stubRecord, true, nil
}

// stubWaiter is the stub's Waiter: Attempt finds the key busy (held for an
// hour) unless the stub's err replaces that; Granted has the stub's
// hand-off, if any.
type stubWaiter struct {
	s       *stub
	granted chan lock.Lease
}

func (w *stubWaiter) Attempt(ctx context.Context) (lock.Lease, error) {
	w.s.record(ctx, stubCall{Method: "Attempt"})
	if w.s.err != nil {
		return lock.Lease{}, w.s.err
	}
	return lock.Lease{}, &lock.LockedError{ExpiresAt: time.Now().Add(time.Hour)}
}

func (w *stubWaiter) Granted() <-chan lock.Lease { return w.granted }

func (w *stubWaiter) Leave(took bool) {
	w.s.record(nil, stubCall{Method: "Leave", Took: took, NilContext: true})
}

// The stub seen as a backend with fewer extensions.
type (
	coreOnly struct{ lock.Backend }
	idOnly   struct{ lock.IDBackend }
	recOnly  struct{ lock.Recorder }
)

// TestWithHooksKeepsExactlyTheExtensions: the backend WithHooks returns
// is an IDBackend exactly when the wrapped one is, a Recorder exactly when
// it is, also when wrapped twice.
func TestWithHooksKeepsExactlyTheExtensions(t *testing.T) {
	for _, tc := range []struct {
		desc      string
		b         lock.Backend
		id, recdr bool
	}{
		{"core Backend", coreOnly{&stub{}}, false, false},
		{"IDBackend", idOnly{&stub{}}, true, false},
		{"Recorder", recOnly{&stub{}}, false, true},
		{"IDBackend and Recorder", &stub{}, true, true},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			once := lock.WithHooks(tc.b, passHook())
			for name, b := range map[string]lock.Backend{"hooked": once, "hooked twice": lock.WithHooks(once, passHook())} {
				if _, ok := b.(lock.IDBackend); ok != tc.id {
					t.Errorf("%s: is a lock.IDBackend = %v, want %v", name, ok, tc.id)
				}
				if _, ok := b.(lock.Recorder); ok != tc.recdr {
					t.Errorf("%s: is a lock.Recorder = %v, want %v", name, ok, tc.recdr)
				}
			}
		})
	}
}

// TestHookOps: every method of a hooked backend runs through the hooks as
// an Op of the right kind with its arguments, the hook sees its results
// once next has returned, the backend gets the arguments and the context
// the hooks gave next, and the caller gets the backend's results.
func TestHookOps(t *testing.T) {
	id := lockdriver.NewLockID()
	const ttl = 7 * time.Second
	l := lock.Lease{Key: "k", ID: id, Fence: "000000000000001", TTL: time.Second, ExpiresAt: stubExpiry}
	reqs := []lock.Lease{{ID: id, TTL: ttl}, {ID: lockdriver.NewLockID(), TTL: 2 * ttl}}
	results := []lock.ExtendResult{{ExpiresAt: stubExpiry}, {ExpiresAt: stubExpiry.Add(time.Second)}}
	type tuple struct {
		a any
		b bool
	}
	ids := func(b lock.Backend) lock.IDBackend { return b.(lock.IDBackend) }
	recs := func(b lock.Backend) lock.Recorder { return b.(lock.Recorder) }
	tests := []struct {
		desc    string
		call    func(ctx context.Context, b lock.Backend) (any, error)
		want    lock.Op
		reached []stubCall
		ret     any
		wantErr error // nil: no error
	}{
		{
			desc:    "Acquire",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return b.Acquire(ctx, "k", ttl) },
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", TTL: ttl, Lease: stubLease},
			reached: []stubCall{{Method: "Acquire", Key: "k", TTL: ttl}},
			ret:     stubLease,
		},
		{
			desc:    "Release",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return nil, b.Release(ctx, id) },
			want:    lock.Op{Kind: lock.OpRelease, ID: id},
			reached: []stubCall{{Method: "Release", ID: id}},
		},
		{
			desc:    "Extend",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return b.Extend(ctx, id, ttl) },
			want:    lock.Op{Kind: lock.OpExtend, ID: id, TTL: ttl, ExpiresAt: stubExpiry},
			reached: []stubCall{{Method: "Extend", ID: id, TTL: ttl}},
			ret:     stubExpiry,
		},
		{
			desc:    "IsLocked",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return b.IsLocked(ctx, "k") },
			want:    lock.Op{Kind: lock.OpIsLocked, Key: "k", Held: true},
			reached: []stubCall{{Method: "IsLocked", Key: "k"}},
			ret:     true,
		},
		{
			desc:    "LookupKey",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return b.LookupKey(ctx, "k") },
			want:    lock.Op{Kind: lock.OpLookupKey, Key: "k", Info: stubInfo},
			reached: []stubCall{{Method: "LookupKey", Key: "k"}},
			ret:     stubInfo,
		},
		{
			desc:    "LookupID",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return b.LookupID(ctx, id) },
			want:    lock.Op{Kind: lock.OpLookupID, ID: id, Info: stubInfo},
			reached: []stubCall{{Method: "LookupID", ID: id}},
			ret:     stubInfo,
		},
		{
			desc:    "IDBackend.AcquireID",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return ids(b).AcquireID(ctx, "k", id, ttl) },
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", ID: id, TTL: ttl, Lease: stubLease},
			reached: []stubCall{{Method: "AcquireID", Key: "k", ID: id, TTL: ttl}},
			ret:     stubLease,
		},
		{
			// An id the backend must reject still reaches the method the
			// caller called, not Acquire.
			desc:    "IDBackend.AcquireID with an empty id",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return ids(b).AcquireID(ctx, "k", "", ttl) },
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", TTL: ttl, Lease: stubLease},
			reached: []stubCall{{Method: "AcquireID", Key: "k", TTL: ttl}},
			ret:     stubLease,
		},
		{
			desc: "IDBackend.AcquireSlot",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				return ids(b).AcquireSlot(ctx, "k", id, 3, ttl)
			},
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", ID: id, Limit: 3, TTL: ttl, Lease: stubLease},
			reached: []stubCall{{Method: "AcquireSlot", Key: "k", ID: id, N: 3, TTL: ttl}},
			ret:     stubLease,
		},
		{
			desc: "IDBackend.AcquireSlot with n 1",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				return ids(b).AcquireSlot(ctx, "k", id, 1, ttl)
			},
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", ID: id, Limit: 1, TTL: ttl, Lease: stubLease},
			reached: []stubCall{{Method: "AcquireSlot", Key: "k", ID: id, N: 1, TTL: ttl}},
			ret:     stubLease,
		},
		{
			// Limit 0 means the lock in an Op; the call must still reach
			// AcquireSlot, for the backend to reject n.
			desc: "IDBackend.AcquireSlot with n 0",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				return ids(b).AcquireSlot(ctx, "k", id, 0, ttl)
			},
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", ID: id, TTL: ttl, Lease: stubLease},
			reached: []stubCall{{Method: "AcquireSlot", Key: "k", ID: id, N: 0, TTL: ttl}},
			ret:     stubLease,
		},
		{
			desc:    "IDBackend.LookupLimit",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return ids(b).LookupLimit(ctx, "k") },
			want:    lock.Op{Kind: lock.OpLookupLimit, Key: "k", LimitInfo: stubLimit},
			reached: []stubCall{{Method: "LookupLimit", Key: "k"}},
			ret:     stubLimit,
		},
		{
			desc:    "IDBackend.ExtendBatch",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return ids(b).ExtendBatch(ctx, reqs), nil },
			want:    lock.Op{Kind: lock.OpExtendBatch, Leases: reqs, Results: results},
			reached: []stubCall{{Method: "ExtendBatch", Reqs: reqs}},
			ret:     results,
		},
		{
			desc: "IDBackend.Join, then Waiter.Attempt",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				w, err := ids(b).Join("k", id, 2, ttl, time.Minute)
				if err != nil {
					return nil, err
				}
				defer w.Leave(false)
				return w.Attempt(ctx)
			},
			want: lock.Op{Kind: lock.OpAcquire, Key: "k", ID: id, Limit: 2, TTL: ttl, Queued: true},
			reached: []stubCall{
				{Method: "Join", Key: "k", ID: id, N: 2, TTL: ttl, Wait: time.Minute, NilContext: true},
				{Method: "Attempt"},
				{Method: "Leave", NilContext: true},
			},
			ret:     lock.Lease{},
			wantErr: lock.ErrLocked,
		},
		{
			desc:    "Recorder.ReleaseDone",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return nil, recs(b).ReleaseDone(ctx, l, ttl) },
			want:    lock.Op{Kind: lock.OpReleaseDone, Key: "k", ID: id, MarkTTL: ttl},
			reached: []stubCall{{Method: "ReleaseDone", Lease: l, TTL: ttl}},
		},
		{
			desc:    "Recorder.IsDone",
			call:    func(ctx context.Context, b lock.Backend) (any, error) { return recs(b).IsDone(ctx, "k") },
			want:    lock.Op{Kind: lock.OpIsDone, Key: "k", Done: true},
			reached: []stubCall{{Method: "IsDone", Key: "k"}},
			ret:     true,
		},
		{
			desc: "Recorder.ReleaseRecord",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				return nil, recs(b).ReleaseRecord(ctx, l, []byte("result"), ttl)
			},
			want:    lock.Op{Kind: lock.OpReleaseRecord, Key: "k", ID: id, Record: []byte("result"), MarkTTL: ttl},
			reached: []stubCall{{Method: "ReleaseRecord", Lease: l, Record: []byte("result"), TTL: ttl}},
		},
		{
			desc: "Recorder.Record",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				rec, ok, err := recs(b).Record(ctx, "k")
				return tuple{rec, ok}, err
			},
			want:    lock.Op{Kind: lock.OpRecord, Key: "k", Record: stubRecord, Found: true},
			reached: []stubCall{{Method: "Record", Key: "k"}},
			ret:     tuple{stubRecord, true},
		},
		{
			desc: "Recorder.AcquireDone, an acquire",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				l, done, err := recs(b).AcquireDone(ctx, "k", ttl)
				return tuple{l, done}, err
			},
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", TTL: ttl, Done: true},
			reached: []stubCall{{Method: "AcquireDone", Key: "k", TTL: ttl}},
			ret:     tuple{lock.Lease{}, true},
		},
		{
			desc: "Recorder.AcquireRecord, an acquire",
			call: func(ctx context.Context, b lock.Backend) (any, error) {
				l, rec, err := recs(b).AcquireRecord(ctx, "k", ttl)
				return tuple{rec, l.ID != ""}, err
			},
			want:    lock.Op{Kind: lock.OpAcquire, Key: "k", TTL: ttl, Record: stubRecord, Found: true},
			reached: []stubCall{{Method: "AcquireRecord", Key: "k", TTL: ttl}},
			ret:     tuple{stubRecord, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			s := &stub{}
			var log opLog
			b := lock.WithHooks(s, &log, markHook("from the hooks"))
			ret, err := tt.call(context.Background(), b)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(ret, tt.ret) {
				t.Errorf("the call returned %+v, want the backend's %+v", ret, tt.ret)
			}
			log.wantOps(t, []lock.Op{tt.want})
			var want []stubCall
			for _, c := range tt.reached {
				if !c.NilContext {
					c.Mark = "from the hooks"
				}
				want = append(want, c)
			}
			if got := s.reached(); !reflect.DeepEqual(got, want) {
				t.Errorf("the backend got %+v, want %+v", got, want)
			}
		})
	}
}

// TestHookSeesErrors: an operation's error reaches the hook as next's
// result and the caller unchanged, and the operation's results stay zero.
func TestHookSeesErrors(t *testing.T) {
	boom := &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire", Msg: "boom"}
	s := &stub{err: boom}
	var log opLog
	b := lock.WithHooks(s, &log)
	l, err := b.Acquire(context.Background(), "k", time.Second)
	if err != boom || l != (lock.Lease{}) {
		t.Errorf("Acquire = %+v, %v; want a zero Lease and the backend's error", l, err)
	}
	if err := b.(lock.Recorder).ReleaseDone(context.Background(), stubLease, time.Second); err != boom {
		t.Errorf("ReleaseDone = %v, want the backend's error", err)
	}
	got := log.entries()
	if len(got) != 2 {
		t.Fatalf("the hook saw %v, want acquire and release", log.kinds())
	}
	for _, e := range got {
		if e.err != boom {
			t.Errorf("%v: next returned %v to the hook, want the backend's error", e.op.Kind, e.err)
		}
	}
	if got[0].op.Lease != (lock.Lease{}) {
		t.Errorf("acquire: Op.Lease = %+v after an error, want zero", got[0].op.Lease)
	}
}

// TestHookOrder: the first hook given to WithHooks is the outermost, on
// the way in and out.
func TestHookOrder(t *testing.T) {
	var tr trace
	b := lock.WithHooks(&stub{}, tr.hook("a"), tr.hook("b"), tr.hook("c"))
	if err := b.Release(context.Background(), lockdriver.NewLockID()); err != nil {
		t.Fatal(err)
	}
	if got, want := tr.String(), "a>release b>release c>release c<release b<release a<release"; got != want {
		t.Errorf("trace = %q, want %q", got, want)
	}
}

// TestHookNested: hooks added by WithHooks on a backend that already has
// some run outside them; the inner hooks still see every operation once,
// and the events of Acquire; and the backend is called once per
// operation.
func TestHookNested(t *testing.T) {
	t.Run("operations", func(t *testing.T) {
		var tr trace
		s := &stub{}
		inner := lock.WithHooks(s, tr.hook("i1"), tr.hook("i2"))
		outer := lock.WithHooks(inner, tr.hook("o"))
		if _, err := outer.(lock.IDBackend).AcquireSlot(context.Background(), "k", lockdriver.NewLockID(), 2, time.Second); err != nil {
			t.Fatal(err)
		}
		if got, want := tr.String(), "o>acquire i1>acquire i2>acquire i2<acquire i1<acquire o<acquire"; got != want {
			t.Errorf("trace = %q, want %q", got, want)
		}
		if n := len(s.reached()); n != 1 {
			t.Errorf("the backend was called %d times, want once", n)
		}
	})
	t.Run("events", func(t *testing.T) {
		f := newFake()
		hold(t, f, "k")
		var tr trace
		var innerLog, outerLog opLog
		inner := lock.WithHooks(f, tr.hook("i"), &innerLog)
		outer := lock.WithHooks(inner, tr.hook("o"), &outerLog)
		_, err := lock.Acquire(context.Background(), outer, "k",
			lock.WithRetry(lock.Retry{MaxRetries: 1, BaseDelay: time.Millisecond}))
		if !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Acquire of a held key = %v, want ErrLocked", err)
		}
		want := []lock.OpKind{lock.OpWait, lock.OpAcquire, lock.OpRetry, lock.OpAcquire, lock.OpRetry}
		if got := outerLog.kinds(); !slices.Equal(got, want) {
			t.Errorf("outer hook saw %v, want %v", got, want)
		}
		if got := innerLog.kinds(); !slices.Equal(got, want) {
			t.Errorf("inner hook saw %v, want %v", got, want)
		}
		if !strings.HasPrefix(tr.String(), "o>wait i>wait o>acquire i>acquire i<acquire o<acquire o>retry i>retry") {
			t.Errorf("trace = %q, want the outer hook first, the wait around the attempts", tr.String())
		}
		if n := attempts(f); n != 2 {
			t.Errorf("%d attempts reached the backend, want 2", n)
		}
	})
}

// TestHookWaitAndRetries: Acquire's whole acquisition is one OpWait whose
// next runs the attempts, under the context the hooks gave it; every
// failed attempt is an OpRetry with its number, error and wait (none after
// the last), and the wait fails with Acquire's error.
func TestHookWaitAndRetries(t *testing.T) {
	f := newFake()
	hold(t, f, "k")
	var marked []bool
	f.setHook(func(ctx context.Context, method string) error {
		marked = append(marked, ctx.Value(markKey{}) == "wait")
		return nil
	})
	var log opLog
	b := lock.WithHooks(f, &log, markHook("wait", lock.OpWait))
	_, err := lock.Acquire(context.Background(), b, "k",
		lock.WithRetry(lock.Retry{MaxRetries: 2, BaseDelay: time.Millisecond}), lock.WithTTL(time.Minute))
	if !errors.Is(err, lock.ErrLocked) || lock.CodeOf(err) != lock.CodeAcquisitionTimeout {
		t.Fatalf("Acquire of a held key = %v, want AcquisitionTimeout matching ErrLocked", err)
	}
	want := []lock.OpKind{lock.OpWait, lock.OpAcquire, lock.OpRetry, lock.OpAcquire, lock.OpRetry, lock.OpAcquire, lock.OpRetry}
	if got := log.kinds(); !slices.Equal(got, want) {
		t.Fatalf("the hook saw %v, want %v", got, want)
	}
	if !slices.Equal(marked, []bool{true, true, true}) {
		t.Errorf("the backend's Acquire ran under the wait's context: %v, want every attempt", marked)
	}
	ops := log.entries()
	wait := ops[0]
	if wait.mark != nil || wait.err != err || wait.op.Key != "k" || wait.op.TTL != time.Minute || wait.op.Lease != (lock.Lease{}) {
		t.Errorf("wait = %+v, next returned %v; want key k, ttl 1m, no lease, Acquire's error", wait.op, wait.err)
	}
	for i, e := range ops[1:] {
		if e.mark != "wait" {
			t.Errorf("%v %d ran outside the wait's context", e.op.Kind, i)
		}
	}
	for i, r := range log.only(lock.OpRetry) {
		if r.op.Attempt != i+1 || !errors.Is(r.op.Err, lock.ErrLocked) || r.op.Key != "k" {
			t.Errorf("retry %d: attempt %d, key %q, err %v; want attempt %d, key k, ErrLocked", i, r.op.Attempt, r.op.Key, r.op.Err, i+1)
		}
		if last := i == 2; last != (r.op.Wait == 0) {
			t.Errorf("retry %d: wait %v, want a wait before the next attempt and none after the last", i, r.op.Wait)
		}
	}
}

// TestHookWaitDo: Do's acquisition is an OpWait that ends with the lease
// Do's function gets; its release goes through the hooks too.
func TestHookWaitDo(t *testing.T) {
	f := newFake()
	var log opLog
	b := lock.WithHooks(f, &log)
	var got lock.Lease
	err := lock.Do(context.Background(), b, "k", func(_ context.Context, l lock.Lease) error {
		got = l
		return nil
	}, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	log.wantOps(t, []lock.Op{
		{Kind: lock.OpWait, Key: "k", TTL: time.Minute, Lease: got},
		{Kind: lock.OpAcquire, Key: "k", TTL: time.Minute, Lease: got},
		{Kind: lock.OpRelease, ID: got.ID},
	})
}

// TestHookSkipsWait: a hook that returns from OpWait without calling next
// makes Acquire fail with CodeInternal, never return a zero Lease with a
// nil error.
func TestHookSkipsWait(t *testing.T) {
	skip := hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			if op.Kind == lock.OpWait {
				return nil
			}
			return next(ctx, op)
		}
	})
	l, err := lock.Acquire(context.Background(), lock.WithHooks(newFake(), skip), "k")
	if lock.CodeOf(err) != lock.CodeInternal || l != (lock.Lease{}) {
		t.Fatalf("Acquire = %+v, %v; want a zero Lease and a CodeInternal error", l, err)
	}
}

// TestHookGranted: a queued waiter's attempts are OpAcquire with Queued,
// and the lease a release hands over is an OpGranted in the wait, which
// ends with that lease; the waiter then leaves having taken it.
func TestHookGranted(t *testing.T) {
	for _, tc := range []struct {
		desc string
		opts []lock.Option
		n    int
	}{
		{"lock", nil, 0},
		{"slot", []lock.Option{lock.WithLimit(3)}, 3},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			s := &stub{grant: true}
			var log opLog
			b := lock.WithHooks(s, &log)
			l, err := lock.Acquire(context.Background(), b, "k",
				append(tc.opts, lock.WithTTL(time.Minute), lock.WithWait(time.Hour))...)
			if err != nil {
				t.Fatal(err)
			}
			calls := s.reached()
			if len(calls) != 4 || calls[1].Method != "Join" || calls[2].Method != "Attempt" || !reflect.DeepEqual(calls[3], stubCall{Method: "Leave", Took: true, NilContext: true}) {
				t.Fatalf("the backend got %+v, want NewLockID, Join, one Attempt, Leave(true)", calls)
			}
			id := calls[1].ID
			if l.ID != id || l.Fence != "000000000000043" {
				t.Errorf("Acquire = %+v, want the lease handed to id %s", l, id)
			}
			ops := log.entries()
			if len(ops) != 4 {
				t.Fatalf("the hook saw %v, want wait, acquire, retry, granted", log.kinds())
			}
			retry := ops[2].op
			if retry.Kind != lock.OpRetry || retry.Attempt != 1 || !errors.Is(retry.Err, lock.ErrLocked) || retry.Wait <= 0 {
				t.Errorf("third operation = %+v, want retry 1 with ErrLocked and a wait", retry)
			}
			for i, d := range [][]string{
				diffOp(ops[0].op, lock.Op{Kind: lock.OpWait, Key: "k", Limit: tc.n, TTL: time.Minute, Lease: l}),
				diffOp(ops[1].op, lock.Op{Kind: lock.OpAcquire, Key: "k", ID: id, Limit: tc.n, TTL: time.Minute, Queued: true}),
				diffOp(ops[3].op, lock.Op{Kind: lock.OpGranted, Key: "k", ID: id, Limit: tc.n, TTL: time.Minute, Lease: l}),
			} {
				for _, msg := range d {
					t.Errorf("%v: %s", ops[[]int{0, 1, 3}[i]].op.Kind, msg)
				}
			}
		})
	}
}

// TestHookLeaseLost: Keep losing a lease is an OpLeaseLost, under Keep's
// context, with the lease and the loss.
func TestHookLeaseLost(t *testing.T) {
	f := newFake()
	var log opLog
	b := lock.WithHooks(f, &log)
	l := lease(t, f, "k", time.Minute)
	ctx := context.WithValue(context.Background(), markKey{}, "keep")
	held, stop := lock.Keep(ctx, b, l, lock.WithHeartbeat(lock.Heartbeat{Interval: 10 * time.Millisecond}))
	defer stop()
	waitFor(t, 5*time.Second, func() bool { return f.count("Extend") >= 1 }, "an extension")
	f.steal("k")
	waitDone(t, held, 5*time.Second, "held after the lease was stolen")
	if err := stop(); !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("stop() = %v, want ErrLeaseLost", err)
	}
	lost := log.only(lock.OpLeaseLost)
	if len(lost) != 1 {
		t.Fatalf("the hook saw %v, want one lease_lost", log.kinds())
	}
	e := lost[0]
	if !errors.Is(e.op.Err, lock.ErrLeaseLost) || !errors.Is(e.op.Err, lock.ErrNotHeld) {
		t.Errorf("lease_lost: Err = %v, want ErrLeaseLost wrapping ErrNotHeld", e.op.Err)
	}
	e.op.Err = nil
	for _, d := range diffOp(e.op, lock.Op{Kind: lock.OpLeaseLost, Key: "k", ID: l.ID, TTL: time.Minute, Lease: l}) {
		t.Errorf("lease_lost: %s", d)
	}
	if e.mark != "keep" {
		t.Errorf("lease_lost ran under a context without Keep's value")
	}
	if n := len(log.only(lock.OpExtend)); n < 2 {
		t.Errorf("the hook saw %d extends, want the heartbeat's", n)
	}
}

// TestHookFailsExtendBatch: a hook that fails an extend_batch without
// calling next gives every request its error, the backend untouched.
func TestHookFailsExtendBatch(t *testing.T) {
	boom := &lock.Error{Code: lock.CodeRateLimited, Op: "extend", Msg: "not now"}
	s := &stub{}
	b := lock.WithHooks(s, hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			if op.Kind == lock.OpExtendBatch {
				return boom
			}
			return next(ctx, op)
		}
	})).(lock.IDBackend)
	reqs := []lock.Lease{{ID: lockdriver.NewLockID(), TTL: time.Second}, {ID: lockdriver.NewLockID(), TTL: time.Second}, {ID: lockdriver.NewLockID(), TTL: time.Second}}
	res := b.ExtendBatch(context.Background(), reqs)
	if len(res) != len(reqs) {
		t.Fatalf("%d results for %d requests", len(res), len(reqs))
	}
	for i, r := range res {
		if r.Err != boom || !r.ExpiresAt.IsZero() {
			t.Errorf("result %d = %+v, want the hook's error", i, r)
		}
	}
	if calls := s.reached(); len(calls) != 0 {
		t.Errorf("the backend got %+v, want nothing", calls)
	}
}

// TestWithHooksPanics: a nil backend or a nil hook is a programming error,
// reported by WithHooks itself when it builds the chain.
func TestWithHooksPanics(t *testing.T) {
	for _, tc := range []struct {
		desc string
		call func()
	}{
		{"nil backend", func() { lock.WithHooks(nil) }},
		{"nil backend with a hook", func() { lock.WithHooks(nil, passHook()) }},
		{"nil hook", func() { lock.WithHooks(newFake(), nil) }},
		{"nil hook after another", func() { lock.WithHooks(newFake(), passHook(), nil) }},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			defer func() {
				switch r := recover(); r.(type) {
				case nil:
					t.Error("WithHooks did not panic")
				case runtime.Error:
					t.Errorf("WithHooks panicked with %v, want its own panic, not a runtime error", r)
				}
			}()
			tc.call()
		})
	}
}

// TestHookNotOperations: Capabilities and NewLockID pass through to the
// backend and are not operations.
func TestHookNotOperations(t *testing.T) {
	s := &stub{}
	var log opLog
	b := lock.WithHooks(s, &log)
	if got := b.Capabilities(); got != stubCaps {
		t.Errorf("Capabilities() = %+v, want the backend's %+v", got, stubCaps)
	}
	if got := lock.WithHooks(newFake(), &log).Capabilities(); got != newFake().Capabilities() {
		t.Errorf("Capabilities() = %+v, want the fake's", got)
	}
	id, err := b.(lock.IDBackend).NewLockID("k")
	if err != nil || lockdriver.ValidateLockID(id) != nil {
		t.Errorf("NewLockID = %q, %v; want a lock id", id, err)
	}
	if calls := s.reached(); len(calls) != 1 || calls[0].Method != "NewLockID" || calls[0].Key != "k" {
		t.Errorf("the backend got %+v, want NewLockID(k)", calls)
	}
	if ops := log.kinds(); len(ops) != 0 {
		t.Errorf("the hook saw %v, want nothing", ops)
	}
}

func TestOpKindString(t *testing.T) {
	for k, want := range map[lock.OpKind]string{
		lock.OpAcquire: "acquire", lock.OpRelease: "release", lock.OpReleaseDone: "release_done",
		lock.OpReleaseRecord: "release_record", lock.OpExtend: "extend",
		lock.OpExtendBatch: "extend_batch", lock.OpIsLocked: "is_locked",
		lock.OpLookupKey: "lookup_key", lock.OpLookupID: "lookup_id",
		lock.OpLookupLimit: "lookup_limit", lock.OpIsDone: "is_done", lock.OpRecord: "record",
		lock.OpWait: "wait", lock.OpRetry: "retry", lock.OpGranted: "granted",
		lock.OpLeaseLost: "lease_lost", lock.OpTerm: "term", 0: "op(0)", 200: "op(200)",
	} {
		if got := k.String(); got != want {
			t.Errorf("OpKind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
}

// TestHandedOver: a backend's release that calls lockdriver.HandedOver shows
// the fence in the release's Op.HandedTo, at every layer of hooks; a
// release without hooks, or one that hands nothing on, shows none.
func TestHandedOver(t *testing.T) {
	const to = lock.Fence("000000000000007")
	f := newFake()
	handing := true
	f.hook = func(ctx context.Context, method string) error {
		if method == "Release" && handing {
			lockdriver.HandedOver(ctx, to)
		}
		return nil
	}
	var inner, outer opLog
	b := lock.WithHooks(lock.WithHooks(f, &inner), &outer)
	for _, handing = range []bool{true, false} {
		l, err := f.Acquire(context.Background(), "k", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(context.Background(), l.ID); err != nil {
			t.Fatal(err)
		}
		want := lock.Fence("")
		if handing {
			want = to
		}
		for name, log := range map[string]*opLog{"inner": &inner, "outer": &outer} {
			ops := log.entries()
			if got := ops[len(ops)-1].op; got.Kind != lock.OpRelease || got.HandedTo != want {
				t.Errorf("%s hook, handing %v: last op %v with HandedTo %q, want a release with %q", name, handing, got.Kind, got.HandedTo, want)
			}
		}
	}
	// Without hooks, HandedOver does nothing (and does not panic).
	handing = true
	l, err := f.Acquire(context.Background(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Release(context.Background(), l.ID); err != nil {
		t.Fatal(err)
	}
}
