package cli

import (
	"strings"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// namer knows the key names of one prefix and layout (see
// redisbackend.Layout): a lock key is "<prefix>:<key>" or, in the cluster
// layout, "<prefix>:{T}:<key>" with a 3-character hash tag T; its index,
// fence, done and record keys put "id:", "fence:", "done:" or "record:"
// where the key goes, its waiter queue is "<prefix>:queue:<lock key>",
// and the backends' configuration record is "<prefix>:config:backend"
// (redisbackend.ConfigKey) in both layouts.
type namer struct {
	prefix  string
	cluster bool
}

// kind is what a Redis key under the prefix is, by its name.
type kind int

const (
	kindLock   kind = iota // a lock key, if its value says so
	kindIndex              // <p>:id:<lock id>
	kindFence              // <p>:fence:<lock key> or a stripe's <p>:fence::<i>
	kindDone               // <p>:done:<lock key>: a done marker
	kindRecord             // <p>:record:<lock key>: a stored record (replay)
	kindQueue              // <p>:queue:<lock key>: the waiters of a lock
	kindConfig             // <p>:config:backend: the backends' configuration record
)

// internal names the key kinds that are not locks, by the word that
// begins their part of the name (user keys cannot begin with it).
var internal = []struct {
	word string
	kind kind
}{{wire.SegID + ":", kindIndex}, {wire.SegFence + ":", kindFence}, {wire.SegDone + ":", kindDone}, {wire.SegRecord + ":", kindRecord}, {wire.SegQueue + ":", kindQueue}}

// scanPattern is the SCAN MATCH pattern of every scan of the locks:
// "<prefix>:*", every key of the prefix in both layouts. --match is
// applied to the keys themselves (globMatch), not to their names: a key
// over the storage budget is stored under a hash of it, and the waiter
// queues and index keys, which watch counts, are named after other parts.
// (SCAN walks every key whatever the pattern, so this costs no more
// round trips; it costs the names of the prefix's other keys.)
func (n namer) scanPattern() string { return globEscape(n.prefix) + ":*" }

// mayMatch reports whether the lock key redisKey may hold a lock whose
// key matches glob, by its name: the key as it is named, or a hashed name
// (22 base64url characters), whose lock data tells the key.
func (n namer) mayMatch(redisKey, glob string) bool {
	if glob == "*" {
		return true
	}
	_, rest, ok := n.split(redisKey)
	if !ok {
		return true // its value decides (it will not be a lock of ours)
	}
	return globMatch(glob, rest) || hashedName(rest)
}

// hashedName reports whether the part of a lock key after its tag prefix
// may be wire.MakeStorageKey's hash of a long key: 22 base64url
// characters.
func hashedName(rest string) bool {
	if len(rest) != 22 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// split returns the tag prefix of a key name ("<prefix>" or
// "<prefix>:{T}") and the rest after its ':'.
func (n namer) split(redisKey string) (tagPrefix, rest string, ok bool) {
	if n.cluster {
		return wire.CutTagPrefix(n.prefix, redisKey)
	}
	rest, ok = strings.CutPrefix(redisKey, n.prefix+":")
	return n.prefix, rest, ok
}

// classify tells what redisKey is by its name.
func (n namer) classify(redisKey string) kind {
	if strings.HasPrefix(redisKey, wire.QueuePrefix(n.prefix)) {
		return kindQueue // in the cluster layout too, where the tag follows
	}
	if redisKey == n.prefix+":"+wire.ConfigKeyName {
		return kindConfig // redisbackend refuses this user key; other "config:" keys are locks
	}
	_, rest, ok := n.split(redisKey)
	if !ok {
		return kindLock // its value decides (it will not be a lock of ours)
	}
	for _, in := range internal {
		if strings.HasPrefix(rest, in.word) {
			return in.kind
		}
	}
	return kindLock
}

// isLockOf reports whether redisKey is the lock key of userKey, as the
// lock JSON at redisKey names it: a value copied or planted under another
// name, or a lock of a longer prefix (prefix "a" sees "a:b:key"), is not.
// In the cluster layout the tag is taken from the name, so a lock is
// recognised whatever --fence-stripes says.
func (n namer) isLockOf(redisKey, userKey string) bool {
	tagPrefix, _, ok := n.split(redisKey)
	if !ok {
		return false
	}
	want, err := wire.MakeStorageKey(tagPrefix, userKey, redisbackend.KeyBudget, redisbackend.KeyReserve)
	return err == nil && want == redisKey
}

// queueKey is the waiter queue of a lock key, "<prefix>:queue:<lock key>"
// in both layouts (in the cluster layout its first hash tag is the lock
// key's).
func (n namer) queueKey(lockKey string) string { return wire.QueueKey(n.prefix, lockKey) }

// fencePattern is the SCAN MATCH pattern of the fence counters.
func (n namer) fencePattern() string {
	if n.cluster {
		return globEscape(n.prefix) + ":{???}:" + wire.SegFence + ":*"
	}
	return globEscape(n.prefix) + ":" + wire.SegFence + ":*"
}

// isStripe reports whether a fence key is a stripe's counter
// ("<p>:fence::<i>") rather than a key's own.
func (n namer) isStripe(fenceKey string) bool {
	_, rest, _ := n.split(fenceKey)
	return wire.IsStripe(rest)
}

// globEscape escapes Redis glob's special characters in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// indexValue reads the value of an index key the previous sample did not
// see: granted says it is a grant's (a lease's lock key, a slot's index,
// or the tombstone of a lease that ended: released, "\x001:...", or found
// expired, "\x00-2:..."); lockKey, and key when the value tells it, name
// the lock while the lease lives. A release of an unknown lock id leaves a
// tombstone "\x00-1:..." of its own: not a grant.
func (n namer) indexValue(v string) (lockKey, key string, granted bool) {
	switch {
	case wire.IsTombstone(v):
		t, ok := wire.DecodeTombstone(v)
		return "", "", ok && t.EndedGrant()
	case strings.HasPrefix(v, wire.SlotIndexMark):
		ix, err := wire.DecodeSlotIndex(v)
		if err != nil {
			return "", "", false
		}
		return ix.LockKey, ix.UserKey, true
	case strings.HasPrefix(v, wire.RWIndexMark):
		ix, err := wire.DecodeRWIndex(v)
		if err != nil {
			return "", "", false
		}
		return ix.LockKey, ix.UserKey, true
	case strings.HasPrefix(v, n.prefix+":"):
		return v, "", true
	}
	return "", "", false
}
