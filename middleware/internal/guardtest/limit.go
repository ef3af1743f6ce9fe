package guardtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// limitScenarios are the scenarios of concurrency limits (Setup.Limit).
var limitScenarios = []scenario{
	{"limit 3, 30 requests of one user at once: 3 run, 27 get 429; another user has slots of its own", limitNoWait},
	{"limit 3 with a wait: 30 requests all run, never more than 3 at once", limitWait},
	{"limit reached: Retry-After from the holders' earliest expiry", limitRetryAfter},
	{"limit on a key held as a plain lock: 500, the handler does not run", limitKindMismatch},
}

const (
	limit   = 3
	userA   = "user-a"
	userB   = "user-b"
	burstOf = 30
)

// limitKey is the lock key the middleware makes of user: a limit's key
// leaves the route out by default (an empty route field), and the
// scenarios are unscoped (an empty scope field).
func limitKey(user string) string { return ns + "::" + user }

// free asserts that no slot of k is held.
func (e *env) free(t *testing.T, k string) {
	t.Helper()
	info, err := lock.Backend(e.b).(lock.IDBackend).LookupLimit(context.Background(), k)
	if err != nil || info != nil {
		t.Errorf("LookupLimit after the requests = %+v, %v; want nil, nil: every slot released", info, err)
	}
}

// checkLimitProblem asserts rec is the default 429 answer to a full limit.
func checkLimitProblem(t *testing.T, rec *httptest.ResponseRecorder, k string) {
	t.Helper()
	checkProblem(t, rec, http.StatusTooManyRequests, k)
	var p problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err == nil && p.Type != guard.TypeLimitReached {
		t.Errorf("problem type = %q, want %q (not the 409 %q)", p.Type, guard.TypeLimitReached, guard.TypeBusy)
	}
}

func limitNoWait(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	s := &noWait{t: t, bothB: newCloseOnce(), release: newCloseOnce(), allRejected: newCloseOnce(), fences: map[string]bool{}}
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Limit: limit, Handler: s.handle})
	var recsA []*httptest.ResponseRecorder
	doneA := make(chan struct{})
	go func() {
		defer close(doneA)
		recsA = s.burstA(h)
	}()
	if !wait(s.allRejected.ch, 10*time.Second) {
		t.Errorf("%d requests of user A were not all turned away within 10s", burstOf-limit)
	}
	// User A holds all its slots: user B's requests run, all at once.
	recsB := fire(limit, func() *httptest.ResponseRecorder { return serve(h, ptr(userB)) })
	s.release.close()
	<-doneA
	s.checkA(recsA)
	for i, rec := range recsB {
		if rec.Code != http.StatusOK {
			t.Errorf("user B request %d: status %d, want 200 (body %q)", i, rec.Code, rec.Body.String())
		}
	}
	if p := s.gB.peak.Load(); p != limit {
		t.Errorf("user B: peak concurrency = %d, want %d", p, limit)
	}
	if len(s.fences) != 2*limit {
		t.Errorf("handlers saw %d distinct fences, want %d", len(s.fences), 2*limit)
	}
	e.free(t, limitKey(userA))
	e.free(t, limitKey(userB))
}

// noWait is limitNoWait's run: user A's burst fills its slots, which it
// holds until user B's requests were all in their handlers at once.
type noWait struct {
	t           *testing.T
	gA, gB      maxGauge
	bothB       *closeOnce // every request of user B is in its handler
	release     *closeOnce // user A's holders may answer
	allRejected *closeOnce // user A's requests beyond its slots were answered
	mu          sync.Mutex
	fences      map[string]bool // user and fence: each key has its own counter
	rejectedA   int
}

// handle is the handler of both users' requests.
func (s *noWait) handle(w http.ResponseWriter, r *http.Request, l lock.Lease, ok bool) {
	if !ok {
		s.t.Error("no lease in the handler")
	}
	s.mu.Lock()
	s.fences[r.Header.Get(Header)+" "+string(l.Fence)] = true
	s.mu.Unlock()
	if r.Header.Get(Header) == userB {
		if s.gB.enter() == limit {
			s.bothB.close()
		}
		defer s.gB.leave()
		if !wait(s.bothB.ch, 5*time.Second) {
			s.t.Errorf("user B's %d requests were not in their handlers at once within 5s, with user A's slots full", limit)
		}
		ok2(w)
		return
	}
	s.gA.enter()
	defer s.gA.leave()
	// Hold the slot until every other request of user A has been
	// answered and user B has been served.
	if !wait(s.release.ch, 10*time.Second) {
		s.t.Error("not released within 10s")
	}
	ok2(w)
}

// burstA serves user A's burst, closing allRejected once every request
// beyond its slots was turned away.
func (s *noWait) burstA(h http.Handler) []*httptest.ResponseRecorder {
	return fire(burstOf, func() *httptest.ResponseRecorder {
		rec := serve(h, ptr(userA))
		if rec.Code != http.StatusOK {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.rejectedA++; s.rejectedA == burstOf-limit {
				s.allRejected.close()
			}
		}
		return rec
	})
}

// checkA checks user A's answers: limit of them served, the rest 429.
func (s *noWait) checkA(recsA []*httptest.ResponseRecorder) {
	t := s.t
	okA := 0
	for _, rec := range recsA {
		if rec.Code == http.StatusOK {
			okA++
			continue
		}
		checkLimitProblem(t, rec, userA)
		checkRetryAfter(t, rec, 1, int(guard.DefaultTTL/time.Second))
	}
	if okA != limit || s.rejectedA != burstOf-limit {
		t.Errorf("user A: %d x 200 and %d rejected, want %d and %d", okA, s.rejectedA, limit, burstOf-limit)
	}
	if p := s.gA.peak.Load(); p != limit {
		t.Errorf("user A: peak concurrency = %d, want %d", p, limit)
	}
}

// ok2 is ok under a name that does not shadow the handler's ok.
func ok2(w http.ResponseWriter) { ok(w) }

// overlap is a barrier for requests queued on a limit: a handler leaves
// only once limit handlers were inside at once after it came in (or every
// request left to serve is inside), so the run proves that the limit's
// slots are used together and never exceeded.
type overlap struct {
	mu           sync.Mutex
	inside, done int
	n, limit     int
	full         chan struct{} // closed when the handlers inside may leave
	g            maxGauge
	// onFull, when not nil, runs the first time limit handlers are inside
	// at once (under mu, before they may leave).
	onFull func()
}

func newOverlap(n, limit int) *overlap {
	return &overlap{n: n, limit: limit, full: make(chan struct{})}
}

// enter counts a handler in and returns the channel to wait on.
func (o *overlap) enter() <-chan struct{} {
	o.g.enter()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inside++
	c := o.full
	o.check()
	return c
}

// leave counts a handler out.
func (o *overlap) leave() {
	o.g.leave()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inside--
	o.done++
	if o.inside > 0 {
		o.check()
	}
}

// check opens the barrier when limit handlers are inside, or all those
// left to serve.
func (o *overlap) check() {
	if o.inside >= o.limit || o.inside+o.done >= o.n {
		if o.inside >= o.limit && o.onFull != nil {
			o.onFull()
			o.onFull = nil
		}
		close(o.full)
		o.full = make(chan struct{})
	}
}

func limitWait(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	o := newOverlap(burstOf, limit)
	var mu sync.Mutex
	fences := map[lock.Fence]bool{}
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Limit: limit, Wait: 20 * time.Second, Handler: func(w http.ResponseWriter, r *http.Request, l lock.Lease, _ bool) {
		c := o.enter()
		defer o.leave()
		mu.Lock()
		fences[l.Fence] = true
		mu.Unlock()
		if !wait(c, 5*time.Second) {
			t.Errorf("a handler did not see %d handlers inside at once within 5s", limit)
		}
		ok(w)
	}})
	// While the first limit handlers are inside, a request that does not
	// wait must find no slot: the limit admits no more than limit.
	probe := a.Build(t, Setup{Backend: e.b, Prefix: ns, Limit: limit, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		t.Errorf("a request without wait ran with %d handlers inside", limit)
		ok(w)
	}})
	o.onFull = func() {
		if rec := serve(probe, ptr(userA)); rec.Code != http.StatusTooManyRequests {
			t.Errorf("with %d handlers inside, a request without wait got %d, want 429", limit, rec.Code)
		}
	}
	recs := fire(burstOf, func() *httptest.ResponseRecorder { return serve(h, ptr(userA)) })
	for i, rec := range recs {
		if rec.Code != http.StatusOK {
			t.Errorf("request %d: status %d, want 200 (body %q)", i, rec.Code, rec.Body.String())
		}
	}
	if p := o.g.peak.Load(); p != limit {
		t.Errorf("peak concurrency = %d, want %d", p, limit)
	}
	if len(fences) != burstOf {
		t.Errorf("handlers saw %d distinct fences, want %d", len(fences), burstOf)
	}
	e.free(t, limitKey(userA))
}

// holdSlots takes all n slots of k directly for ttl and releases them in
// cleanup.
func holdSlots(t *testing.T, e *env, k string, n int, ttl time.Duration) {
	t.Helper()
	for range n {
		l, err := lock.Acquire(context.Background(), e.b, k, lock.WithLimit(n), lock.WithTTL(ttl), lock.WithWait(0))
		if err != nil {
			t.Fatalf("Acquire with WithLimit(%d): %v", n, err)
		}
		t.Cleanup(func() { _ = e.b.Release(context.Background(), l.ID) })
	}
}

func limitRetryAfter(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	holdSlots(t, e, limitKey(userA), limit, 10*time.Second) // shorter than the middleware's 30s TTL
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Limit: limit, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		t.Error("handler ran on a full limit")
	}})
	rec := serve(h, ptr(userA))
	checkLimitProblem(t, rec, userA)
	checkRetryAfter(t, rec, 9, 10)
}

func limitKindMismatch(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	hold(t, e, limitKey(userA), 10*time.Second)
	h := a.Build(t, Setup{Backend: e.b, Prefix: ns, Limit: limit, Handler: func(w http.ResponseWriter, r *http.Request, _ lock.Lease, _ bool) {
		t.Error("handler ran on a key held as a plain lock")
	}})
	rec := serve(h, ptr(userA))
	checkProblem(t, rec, http.StatusInternalServerError, userA)
	var p problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err == nil && p.Type != guard.TypeMisconfigured {
		t.Errorf("problem type = %q, want %q", p.Type, guard.TypeMisconfigured)
	}
}
