package cli

import (
	"strings"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// namer knows the key names of one prefix and layout (see
// redisbackend.Layout): a lock key is "<prefix>:<key>" or, in the cluster
// layout, "<prefix>:{T}:<key>" with a 3-character hash tag T; its index,
// fence, done and record keys put "id:", "fence:", "done:" or "record:"
// where the key goes, and its waiter queue is "<prefix>:queue:<lock key>".
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
)

// internal names the key kinds that are not locks, by the word that
// begins their part of the name (user keys cannot begin with it).
var internal = []struct {
	word string
	kind kind
}{{"id:", kindIndex}, {"fence:", kindFence}, {"done:", kindDone}, {"record:", kindRecord}, {"queue:", kindQueue}}

// tagLen is the length of a cluster hash tag.
const tagLen = 3

// lockPattern is the SCAN MATCH pattern of the lock keys whose user key
// matches glob (Redis glob syntax). Internal keys match it too when glob
// is "*"; classify tells them apart.
func (n namer) lockPattern(glob string) string {
	if n.cluster {
		return globEscape(n.prefix) + ":{???}:" + glob
	}
	return globEscape(n.prefix) + ":" + glob
}

// scanPattern is the SCAN MATCH pattern of a scan for the lock keys whose
// user key matches glob: lockPattern, except that in the cluster layout
// with glob "*" it is "<prefix>:*", which also matches the waiter queues
// ("<prefix>:queue:<lock key>", outside the tagged names) so that they are
// counted as in the single layout (SCAN walks every key whatever the
// pattern, so this costs no more round trips).
func (n namer) scanPattern(glob string) string {
	if n.cluster && glob == "*" {
		return globEscape(n.prefix) + ":*"
	}
	return n.lockPattern(glob)
}

// split returns the tag prefix of a key name ("<prefix>" or
// "<prefix>:{T}") and the rest after its ':'.
func (n namer) split(redisKey string) (tagPrefix, rest string, ok bool) {
	rest, ok = strings.CutPrefix(redisKey, n.prefix+":")
	if !ok {
		return "", "", false
	}
	if !n.cluster {
		return n.prefix, rest, true
	}
	if len(rest) < tagLen+3 || rest[0] != '{' || rest[tagLen+1] != '}' || rest[tagLen+2] != ':' {
		return "", "", false
	}
	return redisKey[:len(n.prefix)+tagLen+3], rest[tagLen+3:], true
}

// classify tells what redisKey is by its name.
func (n namer) classify(redisKey string) kind {
	if strings.HasPrefix(redisKey, n.prefix+":queue:") {
		return kindQueue // in the cluster layout too, where the tag follows
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
	want, err := lock.MakeStorageKey(tagPrefix, userKey, redisbackend.KeyBudget, redisbackend.KeyReserve)
	return err == nil && want == redisKey
}

// queueKey is the waiter queue of a lock key, "<prefix>:queue:<lock key>"
// in both layouts (in the cluster layout its first hash tag is the lock
// key's).
func (n namer) queueKey(lockKey string) string { return n.prefix + ":queue:" + lockKey }

// fencePattern is the SCAN MATCH pattern of the fence counters.
func (n namer) fencePattern() string {
	if n.cluster {
		return globEscape(n.prefix) + ":{???}:fence:*"
	}
	return globEscape(n.prefix) + ":fence:*"
}

// isStripe reports whether a fence key is a stripe's counter
// ("<p>:fence::<i>") rather than a key's own.
func (n namer) isStripe(fenceKey string) bool {
	_, rest, _ := n.split(fenceKey)
	return strings.HasPrefix(rest, "fence::")
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
