package wire

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// SegLeader names the channels of leader notices: "<prefix>:leader:<hash>".
// Channels are not keys, so the name never aliases a lock key.
const SegLeader = "leader"

// LeaderChannel is the channel of the leader notices of lockKey. Its hash
// is a cryptographic one, so no chosen key shares another key's channel.
func LeaderChannel(prefix, lockKey string) string {
	sum := sha256.Sum256([]byte(lockKey))
	return prefix + ":" + SegLeader + ":" + base64.RawURLEncoding.EncodeToString(sum[:])[:22]
}

// A leader notice is "<fence> <expiresAtMs> <owner>" for a live term, and
// "<fence> 0" for a term that ended.

// EndNotice is the notice that the term with fence ended.
func EndNotice(fence lock.Fence) string { return string(fence) + " 0" }

// DecodeLeaderNotice reads a leader notice: the term's fence, its expiry
// in server milliseconds (0 when the term ended) and its owner. ok is
// false for anything else.
func DecodeLeaderNotice(payload string) (fence lock.Fence, expiresAtMs int64, owner string, ok bool) {
	f, rest, ok1 := strings.Cut(payload, " ")
	exp, owner, _ := strings.Cut(rest, " ")
	if !ok1 {
		return "", 0, "", false
	}
	fence, err := lockdriver.ParseFence(f)
	if err != nil {
		return "", 0, "", false
	}
	ms, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || ms < 0 {
		return "", 0, "", false
	}
	return fence, ms, owner, true
}
