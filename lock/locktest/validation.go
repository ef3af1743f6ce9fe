package locktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// BadInput is one call to a Backend method with exactly one invalid
// argument: a bad key, ttl or lock id, or a nil context.
type BadInput struct {
	// Name says which method and which argument, such as
	// "Acquire/key/empty".
	Name string
	// Call makes the call on b and returns its error.
	Call func(b lock.Backend) error
}

// BadInputs returns every invalid call the suite makes. A conforming
// Backend fails each with an error whose lock.CodeOf is
// lock.CodeInvalidArgument, before any I/O. key is a valid key, used by
// the calls whose bad argument is another one; nothing is locked when the
// backend conforms.
func BadInputs(key string) []BadInput {
	id := lockdriver.NewLockID() // well-formed, never granted
	var in badInputs
	in.keys()
	in.ttls(key, id)
	in.ids(id)
	in.nilContexts(key, id)
	return in
}

// badInputs collects BadInputs' calls, group by group.
type badInputs []BadInput

func (in *badInputs) add(name string, call func(lock.Backend) error) {
	*in = append(*in, BadInput{Name: name, Call: call})
}

// badTTL is the TTL of the calls whose bad argument is another one.
const badTTL = time.Second

// keys adds the calls with a bad key.
func (in *badInputs) keys() {
	bg := context.Background()
	for _, k := range []struct{ desc, key string }{
		{"empty", ""},
		{"513 bytes", strings.Repeat("k", lockdriver.MaxKeyBytes+1)},
		{"invalid UTF-8", "\xff\xfe"},
		{"invalid UTF-8 after a valid prefix", "locktest/\xc3"},
		{"513 bytes of two-byte characters", strings.Repeat("é", 256) + "k"},
		// U+0958 (3 bytes) is a composition exclusion: NFC turns it into
		// two characters (6 bytes), so 510 bytes become 1020.
		{"over the limit only after NFC", strings.Repeat("\u0958", 170)},
	} {
		in.add("Acquire/key/"+k.desc, func(b lock.Backend) error {
			_, err := b.Acquire(bg, k.key, badTTL)
			return err
		})
		in.add("IsLocked/key/"+k.desc, func(b lock.Backend) error {
			_, err := b.IsLocked(bg, k.key)
			return err
		})
		in.add("LookupKey/key/"+k.desc, func(b lock.Backend) error {
			_, err := b.LookupKey(bg, k.key)
			return err
		})
	}
}

// ttls adds the calls with a bad TTL, on key or lock id id.
func (in *badInputs) ttls(key, id string) {
	bg := context.Background()
	for _, d := range []struct {
		desc string
		ttl  time.Duration
	}{
		{"zero", 0},
		{"negative", -time.Second},
		{"1ns", time.Nanosecond},
		{"999µs", 999 * time.Microsecond},
	} {
		in.add("Acquire/ttl/"+d.desc, func(b lock.Backend) error {
			_, err := b.Acquire(bg, key, d.ttl)
			return err
		})
		in.add("Extend/ttl/"+d.desc, func(b lock.Backend) error {
			_, err := b.Extend(bg, id, d.ttl)
			return err
		})
	}
}

// ids adds the calls with a malformed lock id, made from the valid id.
func (in *badInputs) ids(id string) {
	bg := context.Background()
	for _, i := range []struct{ desc, id string }{
		{"empty", ""},
		{"21 chars", id[:21]},
		{"23 chars", id + "A"},
		{"with +", "+" + id[1:]},
		{"with /", "/" + id[1:]},
		{"padded", id[:20] + "=="},
		{"non-ASCII", "é" + id[2:]},
	} {
		in.add("Release/id/"+i.desc, func(b lock.Backend) error {
			return b.Release(bg, i.id)
		})
		in.add("Extend/id/"+i.desc, func(b lock.Backend) error {
			_, err := b.Extend(bg, i.id, badTTL)
			return err
		})
		in.add("LookupID/id/"+i.desc, func(b lock.Backend) error {
			_, err := b.LookupID(bg, i.id)
			return err
		})
	}
}

// nilContexts adds every method called with a nil context.
func (in *badInputs) nilContexts(key, id string) {
	var nilCtx context.Context
	in.add("Acquire/nil context", func(b lock.Backend) error {
		_, err := b.Acquire(nilCtx, key, badTTL)
		return err
	})
	in.add("Release/nil context", func(b lock.Backend) error {
		return b.Release(nilCtx, id)
	})
	in.add("Extend/nil context", func(b lock.Backend) error {
		_, err := b.Extend(nilCtx, id, badTTL)
		return err
	})
	in.add("IsLocked/nil context", func(b lock.Backend) error {
		_, err := b.IsLocked(nilCtx, key)
		return err
	})
	in.add("LookupKey/nil context", func(b lock.Backend) error {
		_, err := b.LookupKey(nilCtx, key)
		return err
	})
	in.add("LookupID/nil context", func(b lock.Backend) error {
		_, err := b.LookupID(nilCtx, id)
		return err
	})
}

func (s *suite) validationTests() []test {
	return []test{
		{"bad input fails InvalidArgument", s.testBadInputs},
		{"longest key", s.testLongestKey},
		{"key is normalised to NFC", s.testNFC},
	}
}

// testBadInputs: every BadInputs call fails InvalidArgument (not
// contention, not not-held), and none of them took a lock.
func (s *suite) testBadInputs(t *testing.T, b lock.Backend) {
	key := s.key(t, "valid")
	wantInvalid(t, b, BadInputs(key))
	assertFree(t, b, key)
}

// wantInvalid makes every call of inputs on b and fails the test for each
// that does not fail InvalidArgument, or that matches ErrLocked or
// ErrNotHeld.
func wantInvalid(t *testing.T, b lock.Backend, inputs []BadInput) {
	t.Helper()
	for _, in := range inputs {
		err := in.Call(b)
		wantCode(t, in.Name, err, lock.CodeInvalidArgument)
		if errors.Is(err, lock.ErrLocked) || errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("%s: %v matches ErrLocked or ErrNotHeld; bad input is neither", in.Name, err)
		}
	}
}

// testLongestKey: keys of exactly lockdriver.MaxKeyBytes bytes, ASCII or not,
// are accepted.
func (s *suite) testLongestKey(t *testing.T, b lock.Backend) {
	base := evenPad(s.key(t, "two-byte"))
	for _, key := range []string{
		padKey(s.key(t, "ascii"), lockdriver.MaxKeyBytes),
		base + strings.Repeat("é", (lockdriver.MaxKeyBytes-len(base))/2),
	} {
		if len(key) != lockdriver.MaxKeyBytes {
			t.Fatalf("locktest: test key is %d bytes, want %d", len(key), lockdriver.MaxKeyBytes)
		}
		l := mustAcquire(t, b, key, longTTL)
		assertHeld(t, b, l)
		mustRelease(t, b, l)
	}
}

// testNFC: a key is taken in its NFC form: the same text in NFD (longer
// than lockdriver.MaxKeyBytes before normalisation, exactly that after) is
// accepted, contends with the NFC spelling, and looks up as the same key.
func (s *suite) testNFC(t *testing.T, b lock.Backend) {
	base := evenPad(s.key(t, "nfc"))
	n := (lockdriver.MaxKeyBytes - len(base)) / 2
	nfc := base + strings.Repeat("\u00e9", n)  // é, 2 bytes
	nfd := base + strings.Repeat("e\u0301", n) // e + combining acute, 3 bytes
	if len(nfc) != lockdriver.MaxKeyBytes || len(nfd) <= lockdriver.MaxKeyBytes {
		t.Fatalf("locktest: test keys are %d and %d bytes", len(nfc), len(nfd))
	}
	l, err := b.Acquire(ctx(t), nfd, longTTL)
	if err != nil {
		t.Fatalf("Acquire(NFD key of %d bytes, %d after NFC): %v", len(nfd), len(nfc), err)
	}
	if l.Key != nfc {
		t.Errorf("Lease.Key is not the NFC form of the key")
	}
	if _, err := b.Acquire(ctx(t), nfc, longTTL); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("Acquire(NFC spelling of a held NFD key): %v, want ErrLocked", err)
	}
	info, err := b.LookupKey(ctx(t), nfc)
	if err != nil || info == nil {
		t.Fatalf("LookupKey(NFC spelling) = %v, %v; want the lease", info, err)
	}
	if info.KeyHash != lockdriver.HashKey(nfc) || info.IDHash != lockdriver.HashKey(l.ID) {
		t.Errorf("LookupKey(NFC spelling) = %+v, want the lease taken with the NFD spelling", info)
	}
	mustRelease(t, b, l)
	assertFree(t, b, nfd)
}

// evenPad pads an ASCII key with one 'a' when its length is odd, so that
// two-byte characters fill it to exactly lockdriver.MaxKeyBytes.
func evenPad(key string) string {
	if len(key)%2 == 1 {
		return key + "a"
	}
	return key
}
