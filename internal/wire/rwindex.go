package wire

import (
	"errors"
	"strconv"
	"strings"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// RWIndexMark starts the index value of a read-write lock's holder,
// version 1 (redisbackend/scripts/rw.lua).
const RWIndexMark = "\x021 "

// RWIndex is the value of a read-write lock holder's index key:
//
//	"\x021 <r|w> <fence> <acquiredAtMs> <expiresAtMs> <lock key length> <lock key><user key>"
//
// The lock key is a sorted set of the holders, "r<lock id>" or
// "w<lock id>" -> expiresAtMs, the same expiry as the index's.
type RWIndex struct {
	Mode         byte // 'r' for a reader, 'w' for the writer
	Fence        lock.Fence
	AcquiredAtMs int64
	ExpiresAtMs  int64
	LockKey      string // the read-write lock's sorted set
	UserKey      string
}

// ErrNotRWIndex is DecodeRWIndex's error for anything else.
var ErrNotRWIndex = errors.New("not a syncguard read-write index")

// DecodeRWIndex parses a read-write lock holder's index value.
func DecodeRWIndex(v string) (RWIndex, error) {
	rest, ok := strings.CutPrefix(v, RWIndexMark)
	if !ok {
		return RWIndex{}, ErrNotRWIndex
	}
	f := strings.SplitN(rest, " ", 6)
	if len(f) != 6 || (f[0] != "r" && f[0] != "w") {
		return RWIndex{}, ErrNotRWIndex
	}
	fence, err := lockdriver.ParseFence(f[1])
	acq, err1 := strconv.ParseInt(f[2], 10, 64)
	exp, err2 := strconv.ParseInt(f[3], 10, 64)
	klen, err3 := strconv.Atoi(f[4])
	if err != nil || err1 != nil || err2 != nil || err3 != nil || klen < 0 || klen > len(f[5]) {
		return RWIndex{}, ErrNotRWIndex
	}
	return RWIndex{Mode: f[0][0], Fence: fence, AcquiredAtMs: acq, ExpiresAtMs: exp, LockKey: f[5][:klen], UserKey: f[5][klen:]}, nil
}
