package wire

import (
	"errors"
	"strconv"
	"strings"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// The segments that name a lock's other keys after the prefix. A user key
// may not begin with one of them and ':', so no lock key aliases them.
const (
	SegID     = "id"     // a lease's index: its lock key, or a slot's index
	SegFence  = "fence"  // a key's fence counter; "fence::<i>" a stripe's
	SegDone   = "done"   // a done marker (lock.Recorder.ReleaseDone)
	SegRecord = "record" // a stored response (lock.Recorder.ReleaseRecord)
	SegQueue  = "queue"  // a key's waiter queue (a sorted set)
	SegConfig = "config" // the backends' configuration record, "config:backend"
)

// ReservedSegments are the segments a user key may not begin with.
var ReservedSegments = []string{SegID, SegFence, SegDone, SegRecord, SegQueue}

// ReservedKey reports whether key begins with a reserved segment and ':'.
func ReservedKey(key string) bool {
	for _, s := range ReservedSegments {
		if len(key) > len(s) && key[len(s)] == ':' && strings.HasPrefix(key, s) {
			return true
		}
	}
	return false
}

// The first byte of an index key's value tells what it holds: a slot's
// index, a release's tombstone, or else the lock key itself.
const (
	SlotIndexMark = "\x01"
	TombstoneMark = "\x00"
)

// IsTombstone reports whether an index key's value is a release's
// tombstone ("\x00<result>:<nonce>"), kept for the resend window.
func IsTombstone(v string) bool { return strings.HasPrefix(v, TombstoneMark) }

// Tombstone is a release's tombstone, "\x00<result>:<nonce>". It keeps the
// release's result with the call's nonce, so a resent call gets the same
// answer.
type Tombstone struct {
	Result, Nonce string
}

// DecodeTombstone parses an index key's value as a tombstone; ok is false
// for anything else.
func DecodeTombstone(v string) (t Tombstone, ok bool) {
	rest, ok := strings.CutPrefix(v, TombstoneMark)
	if !ok {
		return Tombstone{}, false
	}
	t.Result, t.Nonce, ok = strings.Cut(rest, ":")
	if !ok {
		return Tombstone{}, false
	}
	return t, true
}

// EndedGrant reports whether the tombstone ends a lease that was granted:
// released or found expired.
func (t Tombstone) EndedGrant() bool { return t.Result == "1" || t.Result == "-2" }

// SlotIndex is the value of a concurrency-limit slot's index key:
//
//	"\x01<fence> <acquiredAtMs> <n> <lock key length> <lock key><user key>"
type SlotIndex struct {
	Fence        lock.Fence
	AcquiredAtMs int64
	N            int    // the limit of the grant
	LockKey      string // the limit's sorted set
	UserKey      string
}

// ErrNotSlotIndex is DecodeSlotIndex's error for anything else.
var ErrNotSlotIndex = errors.New("not a syncguard slot index")

// DecodeSlotIndex parses a slot's index value.
func DecodeSlotIndex(v string) (SlotIndex, error) {
	rest, ok := strings.CutPrefix(v, SlotIndexMark)
	if !ok {
		return SlotIndex{}, ErrNotSlotIndex
	}
	f := strings.SplitN(rest, " ", 5)
	if len(f) != 5 {
		return SlotIndex{}, ErrNotSlotIndex
	}
	fence, err := lockdriver.ParseFence(f[0])
	acq, err1 := strconv.ParseInt(f[1], 10, 64)
	n, err2 := strconv.Atoi(f[2])
	klen, err3 := strconv.Atoi(f[3])
	if err != nil || err1 != nil || err2 != nil || err3 != nil || n < 1 || klen < 0 || klen > len(f[4]) {
		return SlotIndex{}, ErrNotSlotIndex
	}
	return SlotIndex{Fence: fence, AcquiredAtMs: acq, N: n, LockKey: f[4][:klen], UserKey: f[4][klen:]}, nil
}
