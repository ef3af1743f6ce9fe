// Package demohttp holds what the HTTP middleware examples share: a
// stand-in authentication, the client side, and broken locks for tests.
package demohttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Reply is what the client saw.
type Reply struct {
	Status     int
	Fence      lock.Fence // on 200 and 201
	User       string     // on 200 and 201, when the body names it
	RetryAfter string     // on 409 and 429
	Replayed   bool       // Idempotent-Replayed
	NotStored  string     // Idempotent-Not-Stored
}

// String formats r as "409 Conflict, Retry-After: …" and the like.
func (r Reply) String() string {
	s := fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
	switch r.Status {
	case http.StatusOK, http.StatusCreated:
		s += ", fence " + string(r.Fence)
		if r.User != "" {
			s += ", for " + r.User
		}
	case http.StatusConflict, http.StatusTooManyRequests:
		s += ", Retry-After: " + r.RetryAfter
	}
	if r.Replayed {
		s += ", replayed"
	}
	if r.NotStored != "" {
		s += ", not stored: " + r.NotStored
	}
	return s
}

// Send sends one request and, on a 200 or 201, reads the body's "fence"
// and "user".
func Send(ctx context.Context, c *http.Client, method, url string, header http.Header) (Reply, error) {
	return SendBody(ctx, c, method, url, header, "")
}

// SendBody is Send with a request body.
func SendBody(ctx context.Context, c *http.Client, method, url string, header http.Header, body string) (Reply, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return Reply{}, err
	}
	maps.Copy(req.Header, header)
	resp, err := c.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	r := Reply{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"),
		Replayed:  resp.Header.Get("Idempotent-Replayed") == "true",
		NotStored: resp.Header.Get("Idempotent-Not-Stored")}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
		var body struct {
			Fence lock.Fence `json:"fence"`
			User  string     `json:"user"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return Reply{}, fmt.Errorf("%d body: %w", resp.StatusCode, err)
		}
		r.Fence, r.User = body.Fence, body.User
	}
	return r, nil
}

// Fire sends n identical requests at the same moment and returns the
// replies in request order.
func Fire(ctx context.Context, c *http.Client, method, url string, header http.Header, n int) ([]Reply, error) {
	return fire(ctx, c, method, url, header, "", n, nil)
}

func fire(ctx context.Context, c *http.Client, method, url string, header http.Header, body string, n int, answered func()) ([]Reply, error) {
	replies := make([]Reply, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start // all at once
			replies[i], errs[i] = SendBody(ctx, c, method, url, header, body)
			if answered != nil {
				answered()
			}
		})
	}
	close(start)
	wg.Wait()
	return replies, errors.Join(errs...)
}

// Burst fires n duplicates at once and keeps the winners in their handlers
// (Hold) until the others have been answered, so that on a loaded machine
// a late duplicate cannot find the lock free again.
type Burst struct {
	n     int
	slots int // requests the lock lets in at once
	limit time.Duration
	seen  atomic.Int64
	done  chan struct{}
	once  sync.Once
}

// NewBurst returns a burst of n requests whose winner holds for at most
// limit.
func NewBurst(n int, limit time.Duration) *Burst { return NewLimitBurst(n, 1, limit) }

// NewLimitBurst returns a burst of n requests on a concurrency limit of
// slots whose winners hold for at most limit.
func NewLimitBurst(n, slots int, limit time.Duration) *Burst {
	return &Burst{n: n, slots: slots, limit: limit, done: make(chan struct{})}
}

// Fire sends the burst's n requests, with body, at the same moment and
// returns the replies in request order.
func (b *Burst) Fire(ctx context.Context, c *http.Client, method, url string, header http.Header, body string) ([]Reply, error) {
	return fire(ctx, c, method, url, header, body, b.n, func() {
		if b.seen.Add(1) >= int64(b.n-b.slots) {
			b.once.Do(func() { close(b.done) })
		}
	})
}

// Hold returns once the requests of the burst that find no slot have been
// answered, after the limit, or when ctx ends.
func (b *Burst) Hold(ctx context.Context) {
	t := time.NewTimer(b.limit)
	defer t.Stop()
	select {
	case <-b.done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// CheckBurst prints the replies to a burst and checks that one was served
// and the others got 409 with Retry-After. It returns the served reply.
func CheckBurst(w io.Writer, replies []Reply, served int) (Reply, error) {
	var won Reply
	for i, r := range replies {
		fmt.Fprintf(w, "  request %2d: %s\n", i+1, r)
		if r.Status == served {
			won = r
		}
	}
	got := Tally(replies)
	fmt.Fprintf(w, "  tally: %s\n", got)
	if want := fmt.Sprintf("%d: 1, 409: %d", served, len(replies)-1); got != want {
		return Reply{}, fmt.Errorf("burst: tally %q, want %q", got, want)
	}
	for i, r := range replies {
		if r.Status == http.StatusConflict && r.RetryAfter == "" {
			return Reply{}, fmt.Errorf("burst: request %d: 409 without Retry-After", i+1)
		}
	}
	return won, nil
}

// CheckLimited prints the replies to a burst on a limit of slots and
// checks the peak is within it and every reply is 200 or a 429 with
// Retry-After.
func CheckLimited(w io.Writer, replies []Reply, slots int, peak int64) error {
	for i, r := range replies {
		fmt.Fprintf(w, "  request %2d: %s\n", i+1, r)
	}
	fmt.Fprintf(w, "  tally: %s\n", Tally(replies))
	fmt.Fprintf(w, "  peak concurrency in the handler: %d (limit %d)\n", peak, slots)
	if peak > int64(slots) {
		return fmt.Errorf("limit: peak concurrency %d, over the limit of %d", peak, slots)
	}
	for i, r := range replies {
		switch {
		case r.Status != http.StatusOK && r.Status != http.StatusTooManyRequests:
			return fmt.Errorf("limit: request %d: %s, want 200 or 429", i+1, r)
		case r.Status == http.StatusTooManyRequests && r.RetryAfter == "":
			return fmt.Errorf("limit: request %d: 429 without Retry-After", i+1)
		}
	}
	return nil
}

// Gauge counts the handlers running at once and keeps the peak.
type Gauge struct{ cur, peak atomic.Int64 }

// Enter counts a handler in; call the returned func when it leaves.
func (g *Gauge) Enter() (leave func()) {
	n := g.cur.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return func() { g.cur.Add(-1) }
}

// Peak returns the most handlers seen running at once.
func (g *Gauge) Peak() int64 { return g.peak.Load() }

// Replays sends n identical requests one after the other and checks that
// each is a replay of first.
func Replays(ctx context.Context, w io.Writer, c *http.Client, method, url string, header http.Header, body string, n int, first Reply) error {
	for i := range n {
		r, err := SendBody(ctx, c, method, url, header, body)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  retry %2d: %s\n", i+1, r)
		if !isReplayOf(r, first) {
			return fmt.Errorf("retry %d: %s, want a replay of %s", i+1, r, first)
		}
	}
	return nil
}

func isReplayOf(r, first Reply) bool {
	return r.Replayed && r.Status == first.Status && r.Fence == first.Fence && r.User == first.User
}

// OtherUser sends, as user, the request another user got first for, then
// its retry. It checks that the request runs for user and the retry
// replays that run, not first. Fences are not compared: user's key counts
// its own.
func OtherUser(ctx context.Context, w io.Writer, c *http.Client, user, method, url string, header http.Header, body string, want int, first Reply) error {
	h := As(user, header)
	r, err := SendBody(ctx, c, method, url, h, body)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-23s %s\n", user+", same key and body:", r)
	switch {
	case r.Replayed || r.User == first.User:
		return fmt.Errorf("%s was served %s's response (%s): keys are not scoped to the user", user, first.User, r)
	case r.Status != want || r.Replayed || r.User != user:
		return fmt.Errorf("%s: %s, want a run of their own (%d %s, for %s)", user, r, want, http.StatusText(want), user)
	}
	retry, err := SendBody(ctx, c, method, url, h, body)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-23s %s\n", user+", retry:", retry)
	if !isReplayOf(retry, r) {
		return fmt.Errorf("%s's retry: %s, want a replay of %s", user, retry, r)
	}
	return nil
}

// Sequential sends n identical requests one after the other and checks
// that each fence is above the one before (the first above prev).
func Sequential(ctx context.Context, w io.Writer, c *http.Client, method, url string, header http.Header, n int, prev lock.Fence) error {
	for i := range n {
		r, err := Send(ctx, c, method, url, header)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  request %2d: %s\n", i+1, r)
		if r.Status != http.StatusOK {
			return fmt.Errorf("sequential request %d: status %d, want 200", i+1, r.Status)
		}
		if r.Fence.Compare(prev) <= 0 {
			return fmt.Errorf("sequential request %d: fence %s is not above %s", i+1, r.Fence, prev)
		}
		prev = r.Fence
	}
	return nil
}

// Tally counts the replies by status: "200: 1, 409: 9".
func Tally(rs []Reply) string {
	n := map[int]int{}
	for _, r := range rs {
		n[r.Status]++
	}
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d: %d", s, n[s]))
	}
	return strings.Join(parts, ", ")
}

// JoinFences joins fences with ", ".
func JoinFences(fs []lock.Fence) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// LeakyBackend is a broken lock for the examples' tests: every Acquire
// locks a key of its own, so duplicates never collide.
type LeakyBackend struct {
	lock.Backend
	n atomic.Int64
}

var _ lock.Recorder = (*LeakyBackend)(nil)

// Acquire acquires a fresh key made from key and a counter.
func (b *LeakyBackend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	return b.Backend.Acquire(ctx, fmt.Sprintf("%s#%d", key, b.n.Add(1)), ttl)
}

// ReleaseRecord stores the record under the lease's fresh key, where
// Record never looks: the broken lock replays nothing either.
func (b *LeakyBackend) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	return b.Backend.(lock.Recorder).ReleaseRecord(ctx, l, record, ttl)
}

// Record reads the record of key from the wrapped backend.
func (b *LeakyBackend) Record(ctx context.Context, key string) ([]byte, bool, error) {
	return b.Backend.(lock.Recorder).Record(ctx, key)
}

// ReleaseDone marks the lease's fresh key done, where IsDone never looks.
func (b *LeakyBackend) ReleaseDone(ctx context.Context, l lock.Lease, doneTTL time.Duration) error {
	return b.Backend.(lock.Recorder).ReleaseDone(ctx, l, doneTTL)
}

// IsDone reads the done marker of key from the wrapped backend.
func (b *LeakyBackend) IsDone(ctx context.Context, key string) (bool, error) {
	return b.Backend.(lock.Recorder).IsDone(ctx, key)
}

// AcquireDone is unsupported, so that callers acquire through Acquire.
func (b *LeakyBackend) AcquireDone(context.Context, string, time.Duration) (lock.Lease, bool, error) {
	return lock.Lease{}, false, errors.ErrUnsupported
}

// AcquireRecord is unsupported, so that callers acquire through Acquire.
func (b *LeakyBackend) AcquireRecord(context.Context, string, time.Duration) (lock.Lease, []byte, error) {
	return lock.Lease{}, nil, errors.ErrUnsupported
}

// LeakyLimiter is a broken concurrency limit for the examples' tests: it
// grants slots as if the limit were lockdriver.MaxLimit.
type LeakyLimiter struct {
	lock.IDBackend
}

var _ interface {
	lock.IDBackend
	lock.Recorder
} = LeakyLimiter{}

// AcquireSlot takes a slot whatever n.
func (b LeakyLimiter) AcquireSlot(ctx context.Context, key, id string, _ int, ttl time.Duration) (lock.Lease, error) {
	return b.IDBackend.AcquireSlot(ctx, key, id, lockdriver.MaxLimit, ttl)
}

// Join queues a waiter for a slot whatever n (for the lock when n is 0).
func (b LeakyLimiter) Join(key, id string, n int, ttl, wait time.Duration) (lock.Waiter, error) {
	if n > 0 {
		n = lockdriver.MaxLimit
	}
	return b.IDBackend.Join(key, id, n, ttl, wait)
}

// ReleaseRecord forwards to the wrapped backend.
func (b LeakyLimiter) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	return b.IDBackend.(lock.Recorder).ReleaseRecord(ctx, l, record, ttl)
}

// Record forwards to the wrapped backend.
func (b LeakyLimiter) Record(ctx context.Context, key string) ([]byte, bool, error) {
	return b.IDBackend.(lock.Recorder).Record(ctx, key)
}

// ReleaseDone forwards to the wrapped backend.
func (b LeakyLimiter) ReleaseDone(ctx context.Context, l lock.Lease, doneTTL time.Duration) error {
	return b.IDBackend.(lock.Recorder).ReleaseDone(ctx, l, doneTTL)
}

// IsDone forwards to the wrapped backend.
func (b LeakyLimiter) IsDone(ctx context.Context, key string) (bool, error) {
	return b.IDBackend.(lock.Recorder).IsDone(ctx, key)
}

// AcquireDone forwards to the wrapped backend.
func (b LeakyLimiter) AcquireDone(ctx context.Context, key string, ttl time.Duration) (lock.Lease, bool, error) {
	return b.IDBackend.(lock.Recorder).AcquireDone(ctx, key, ttl)
}

// AcquireRecord forwards to the wrapped backend.
func (b LeakyLimiter) AcquireRecord(ctx context.Context, key string, ttl time.Duration) (lock.Lease, []byte, error) {
	return b.IDBackend.(lock.Recorder).AcquireRecord(ctx, key, ttl)
}

// RunLeakyLimits runs demo behind a LeakyLimiter and returns demo's error,
// which a sound demo must not leave nil.
func RunLeakyLimits(ctx context.Context, w io.Writer, demo demorun.Func) error {
	return demorun.RunBroken(ctx, w, func(b lock.Backend) lock.Backend { return LeakyLimiter{IDBackend: b.(lock.IDBackend)} }, demo)
}

// MixedUsersBackend is a broken scope for the examples' tests: it gives
// every lock key of user From to user To (it rewrites the key's
// ":From:" part to ":To:"), as if keys left out the principal.
type MixedUsersBackend struct {
	lock.Backend
	From, To string
}

var _ lock.Recorder = (*MixedUsersBackend)(nil)

func (b *MixedUsersBackend) key(key string) string {
	return strings.ReplaceAll(key, ":"+b.From+":", ":"+b.To+":")
}

// Acquire acquires To's key for From's.
func (b *MixedUsersBackend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	return b.Backend.Acquire(ctx, b.key(key), ttl)
}

// ReleaseRecord forwards to the wrapped backend.
func (b *MixedUsersBackend) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	return b.Backend.(lock.Recorder).ReleaseRecord(ctx, l, record, ttl)
}

// Record reads To's record for From's.
func (b *MixedUsersBackend) Record(ctx context.Context, key string) ([]byte, bool, error) {
	return b.Backend.(lock.Recorder).Record(ctx, b.key(key))
}

// ReleaseDone forwards to the wrapped backend.
func (b *MixedUsersBackend) ReleaseDone(ctx context.Context, l lock.Lease, doneTTL time.Duration) error {
	return b.Backend.(lock.Recorder).ReleaseDone(ctx, l, doneTTL)
}

// IsDone reads To's done marker for From's.
func (b *MixedUsersBackend) IsDone(ctx context.Context, key string) (bool, error) {
	return b.Backend.(lock.Recorder).IsDone(ctx, b.key(key))
}

// AcquireDone takes To's key for From's, unless To's is done.
func (b *MixedUsersBackend) AcquireDone(ctx context.Context, key string, ttl time.Duration) (lock.Lease, bool, error) {
	return b.Backend.(lock.Recorder).AcquireDone(ctx, b.key(key), ttl)
}

// AcquireRecord takes To's key for From's, or answers with To's record.
func (b *MixedUsersBackend) AcquireRecord(ctx context.Context, key string, ttl time.Duration) (lock.Lease, []byte, error) {
	return b.Backend.(lock.Recorder).AcquireRecord(ctx, b.key(key), ttl)
}

// RunMixedUsers runs demo behind a MixedUsersBackend and returns demo's
// error, which a sound demo must not leave nil.
func RunMixedUsers(ctx context.Context, w io.Writer, from, to string, demo demorun.Func) error {
	return demorun.RunBroken(ctx, w, func(b lock.Backend) lock.Backend { return &MixedUsersBackend{Backend: b, From: from, To: to} }, demo)
}

// RunLeaky runs demo on an embedded miniredis behind a LeakyBackend and
// returns demo's error, which a sound demo must not leave nil.
func RunLeaky(ctx context.Context, w io.Writer, demo demorun.Func) error {
	return demorun.RunBroken(ctx, w, func(b lock.Backend) lock.Backend { return &LeakyBackend{Backend: b} }, demo)
}

// KeyReused sends user's request (header) with another body, which must
// be refused with 422, then the request as other with key alone, which
// must run for them (OtherUser).
func KeyReused(ctx context.Context, w io.Writer, c *http.Client, url string, header, key http.Header, user, other, body string, want int, first Reply) error {
	r, err := SendBody(ctx, c, http.MethodPost, url, header, `{"amount":"99.00"}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-23s %s\n", user+", another body:", r)
	if r.Status != http.StatusUnprocessableEntity {
		return fmt.Errorf("reused key: %s, want 422", r)
	}
	return OtherUser(ctx, w, c, other, http.MethodPost, url, key, body, want, first)
}
