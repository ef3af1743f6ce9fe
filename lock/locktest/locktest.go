package locktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Option configures [Run].
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	expire       func(t *testing.T, d time.Duration)
	sharedFences bool
}

// WithExpiry sets how the suite lets d pass when it waits for leases to
// expire (default: it sleeps), for a store that does not expire keys by
// itself (miniredis: FastForward(d)). The suite waits TTL plus
// lockdriver.TimeTolerance plus a margin; [RunLimit] expects f to move the
// clock the backend reads.
func WithExpiry(f func(t *testing.T, d time.Duration)) Option {
	return optionFunc(func(c *config) { c.expire = f })
}

// WithSharedFences tells the suite that the backend's keys may take their
// fences from shared counters (redisbackend with Options.FenceStripes): a
// key's fences strictly increase, but grants on other keys may advance
// them, so "independent across keys" checks instead that interleaved grants
// on two keys give each strictly increasing fences.
func WithSharedFences() Option {
	return optionFunc(func(c *config) { c.sharedFences = true })
}

// Timing of the suite. Short leases keep the expiry waits (the bulk of the
// suite's run time) short; long leases are ones that must not expire while
// a subtest runs.
const (
	shortTTL     = 200 * time.Millisecond
	longTTL      = 10 * time.Second
	expiryMargin = 300 * time.Millisecond
	callTimeout  = 10 * time.Second
)

// Run runs the conformance suite as subtests of t. newBackend returns a
// fresh backend for a subtest, isolated from other subtests (for example by
// a unique key prefix); it is called once per subtest, with that subtest's
// t. Subtests run sequentially. A [lock.Recorder] is checked for its
// acquires that answer with the key's mark. A backend with concurrency
// limits ([lock.IDBackend]) also runs [RunLimit].
func Run(t *testing.T, newBackend func(t *testing.T) lock.Backend, opts ...Option) {
	t.Helper()
	s := newSuite(t, opts)
	s.runGroups(t, newBackend, []group{
		{"capabilities", s.capabilityTests()},
		{"mutex", s.mutexTests()},
		{"ownership", s.ownershipTests()},
		{"expiry", s.expiryTests()},
		{"fence", s.fenceTests()},
		{"extend", s.extendTests()},
		{"lookup", s.lookupTests()},
		{"validation", s.validationTests()},
		{"cancel", s.cancelTests()},
		{"recorder", s.recorderTests()},
	})
}

// newSuite applies opts to the defaults.
func newSuite(t *testing.T, opts []Option) *suite {
	t.Helper()
	c := config{expire: func(_ *testing.T, d time.Duration) { time.Sleep(d) }}
	for _, o := range opts {
		o.apply(&c)
	}
	if c.expire == nil {
		t.Fatal("locktest: WithExpiry(nil)")
	}
	return &suite{cfg: c, run: randomHex(4)}
}

// group is a named list of subtests.
type group struct {
	name  string
	tests []test
}

// runGroups runs every test of groups, one after another, each as a
// subtest of its group with a backend of its own.
func (s *suite) runGroups(t *testing.T, newBackend func(t *testing.T) lock.Backend, groups []group) {
	t.Helper()
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					b := newBackend(t)
					if b == nil {
						t.Fatal("locktest: newBackend returned nil")
					}
					tc.fn(t, b)
				})
			}
		})
	}
}

// test is one subtest of a group.
type test struct {
	name string
	fn   func(t *testing.T, b lock.Backend)
}

// suite is the state shared by the groups of one Run.
type suite struct {
	cfg  config
	run  string // random per Run, so reruns against one store use fresh keys
	keys atomic.Int64
}

func (s *suite) capabilityTests() []test {
	return []test{{"describes the backend", func(t *testing.T, b lock.Backend) {
		c := b.Capabilities()
		if c.Backend == "" {
			t.Errorf("Capabilities().Backend is empty")
		}
		if c.TimeAuthority != "server" && c.TimeAuthority != "client" {
			t.Errorf("Capabilities().TimeAuthority = %q, want \"server\" or \"client\"", c.TimeAuthority)
		}
	}}}
}

// key returns a key used by no other subtest or Run, mentioning label for
// debugging.
func (s *suite) key(t *testing.T, label string) string {
	name := t.Name()
	if len(name) > 120 {
		name = name[len(name)-120:]
	}
	return fmt.Sprintf("locktest/%s/%s/%s/%d", s.run, name, label, s.keys.Add(1))
}

// wait lets d pass for the backend.
func (s *suite) wait(t *testing.T, d time.Duration) {
	t.Helper()
	s.cfg.expire(t, d)
}

// expiryWait is how long a lease of ttl needs to be gone for every backend.
func expiryWait(ttl time.Duration) time.Duration {
	return ttl + lockdriver.TimeTolerance + expiryMargin
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ctx returns a context bounded by callTimeout, cancelled at cleanup.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return c
}

// mustAcquire acquires key for ttl or ends the test.
func mustAcquire(t *testing.T, b lock.Backend, key string, ttl time.Duration) lock.Lease {
	t.Helper()
	l, err := b.Acquire(ctx(t), key, ttl)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	checkLease(t, "Acquire", b, l, key)
	return l
}

// checkLease ends the test unless l, granted by what for key, is well
// formed: a valid id, the normalised key, an expiry and (with fencing) a
// fence.
func checkLease(t *testing.T, what string, b lock.Backend, l lock.Lease, key string) {
	t.Helper()
	if err := lockdriver.ValidateLockID(l.ID); err != nil {
		t.Fatalf("%s: lease id is malformed: %v", what, err)
	}
	norm, err := lockdriver.NormalizeKey(key)
	if err != nil {
		t.Fatalf("locktest: bad test key: %v", err)
	}
	if l.Key != norm {
		t.Fatalf("%s: Lease.Key = %q, want %q", what, l.Key, norm)
	}
	if l.ExpiresAt.IsZero() {
		t.Fatalf("%s: Lease.ExpiresAt is zero", what)
	}
	if fencing(b) {
		if _, err := lockdriver.ParseFence(string(l.Fence)); err != nil {
			t.Fatalf("%s: Lease.Fence %q: %v", what, l.Fence, err)
		}
	}
}

// mustRelease releases l or fails the test.
func mustRelease(t *testing.T, b lock.Backend, l lock.Lease) {
	t.Helper()
	if err := b.Release(ctx(t), l.ID); err != nil {
		t.Errorf("Release of the holder's lease: %v, want nil", err)
	}
}

func fencing(b lock.Backend) bool { return b.Capabilities().Fencing }

// wantNotHeld fails the test unless err matches lock.ErrNotHeld.
func wantNotHeld(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("%s: %v, want an error matching lock.ErrNotHeld", what, err)
	}
	if c := lock.CodeOf(err); c != "" {
		t.Errorf("%s: error has code %s; not-held is an outcome, not a system failure", what, c)
	}
}

// wantCode fails the test unless lock.CodeOf(err) is code.
func wantCode(t *testing.T, what string, err error, code lock.Code) {
	t.Helper()
	if got := lock.CodeOf(err); got != code {
		t.Errorf("%s: error %v has code %q, want %q", what, err, got, code)
	}
}

// assertHeld checks that l still holds its key, unchanged: the key is
// locked, and both lookups describe l with its original expiry.
func assertHeld(t *testing.T, b lock.Backend, l lock.Lease) {
	t.Helper()
	if ok, err := b.IsLocked(ctx(t), l.Key); err != nil || !ok {
		t.Errorf("IsLocked(holder's key) = %v, %v; want true, nil", ok, err)
	}
	byKey, err := b.LookupKey(ctx(t), l.Key)
	if err != nil || byKey == nil {
		t.Fatalf("LookupKey(holder's key) = %v, %v; want the holder's lease", byKey, err)
	}
	byID, err := b.LookupID(ctx(t), l.ID)
	if err != nil || byID == nil {
		t.Fatalf("LookupID(holder's id) = %v, %v; want the holder's lease", byID, err)
	}
	for name, info := range map[string]*lock.Info{"LookupKey": byKey, "LookupID": byID} {
		if info.IDHash != lockdriver.HashKey(l.ID) {
			t.Errorf("%s: IDHash = %s, want the holder's %s", name, info.IDHash, lockdriver.HashKey(l.ID))
		}
		if info.Fence != l.Fence {
			t.Errorf("%s: Fence = %s, want the holder's %s", name, info.Fence, l.Fence)
		}
		if !near(info.ExpiresAt, l.ExpiresAt, time.Millisecond) {
			t.Errorf("%s: ExpiresAt = %v, want the holder's unchanged %v", name, info.ExpiresAt, l.ExpiresAt)
		}
	}
}

// assertFree checks that key has no live lease.
func assertFree(t *testing.T, b lock.Backend, key string) {
	t.Helper()
	if ok, err := b.IsLocked(ctx(t), key); err != nil || ok {
		t.Errorf("IsLocked = %v, %v; want false, nil", ok, err)
	}
	if info, err := b.LookupKey(ctx(t), key); err != nil || info != nil {
		t.Errorf("LookupKey = %+v, %v; want nil, nil", info, err)
	}
}

// assertGone checks that no live lease has id.
func assertGone(t *testing.T, b lock.Backend, id string) {
	t.Helper()
	if info, err := b.LookupID(ctx(t), id); err != nil || info != nil {
		t.Errorf("LookupID = %+v, %v; want nil, nil", info, err)
	}
}

// near reports whether a and b are at most tol apart.
func near(a, b time.Time, tol time.Duration) bool {
	d := a.Sub(b)
	return -tol <= d && d <= tol
}

// padKey pads key with 'a' to n bytes.
func padKey(key string, n int) string {
	return key + strings.Repeat("a", n-len(key))
}
