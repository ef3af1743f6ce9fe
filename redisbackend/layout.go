package redisbackend

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Layout chooses how a Backend names its Redis keys.
//
//	                 LayoutSingle (syncguard wire format)   LayoutCluster
//	lock key         <prefix>:<key>                         <prefix>:{T}:<key>
//	index key        <prefix>:id:<lockId>                   <prefix>:{T}:id:<lockId>
//	fence key        <prefix>:fence:<lock key>              <prefix>:{T}:fence:<lock key>
//	done marker      <prefix>:done:<lock key>               <prefix>:{T}:done:<lock key>
//	replay record    <prefix>:record:<lock key>             <prefix>:{T}:record:<lock key>
//	lock id          22 random base64url chars (128 bits)   T + 19 random base64url chars (114 bits)
//	waiter queue     <prefix>:queue:<lock key>              <prefix>:queue:<lock key> (first tag: the lock key's)
//	hand-off channel <prefix>:waiter:<random>, per Backend  the same
//
// T, the hash tag, is the first 3 characters of the unpadded base64url
// SHA-256 of "<prefix>:<normalised key>" (18 bits, so the tags spread over
// all 16384 slots). Because "{T}" is the first braced part of every key of a
// lock, Redis Cluster puts them in one hash slot, which the Lua scripts need
// (they touch the lock, index and fence keys together). The lock id starts
// with T, so Release, Extend and LookupID find the index key, and its slot,
// from the id alone. Ids of both layouts have the same shape
// (^[A-Za-z0-9_-]{22}$, lockdriver.ValidateLockID); a cluster id keeps 114 random
// bits from crypto/rand after its 3-character tag.
//
// Keys longer than the budget are hashed as in the single layout
// (wire.MakeStorageKey with KeyBudget and KeyReserve), but the hashed name
// keeps "<prefix>:{T}:" in front, so it stays in the lock's slot. The tag
// costs 6 bytes of the budget (":{T}"); with MaxPrefixBytes and the 512-byte
// key limit a lock key never needs hashing.
//
// In the cluster layout the prefix must not contain '{' or '}' (New rejects
// it): a brace in the prefix would change which part of the key Redis hashes.
// The two layouts use different key names: do not mix them on one prefix.
type Layout int

const (
	// LayoutAuto (the default) picks LayoutCluster for a
	// *redis.ClusterClient (or a wrapper embedding one) and LayoutSingle
	// for any other client.
	LayoutAuto Layout = iota
	// LayoutSingle is the syncguard (TypeScript) key layout, for a single
	// Redis or a replicated primary (Sentinel). Its multi-key scripts fail
	// with CROSSSLOT on Redis Cluster.
	LayoutSingle
	// LayoutCluster keeps every key of one lock in one hash slot (see
	// Layout). It works on a single Redis too, but is not wire-compatible
	// with the TypeScript library.
	LayoutCluster
)

// String returns "auto", "single" or "cluster".
func (l Layout) String() string {
	switch l {
	case LayoutAuto:
		return "auto"
	case LayoutSingle:
		return "single"
	case LayoutCluster:
		return "cluster"
	}
	return "Layout(?)"
}

// MarshalText encodes l as its String ("auto", "single", "cluster"), for
// JSON and other text formats.
func (l Layout) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText decodes "auto", "single" or "cluster".
func (l *Layout) UnmarshalText(b []byte) error {
	for _, v := range []Layout{LayoutAuto, LayoutSingle, LayoutCluster} {
		if string(b) == v.String() {
			*l = v
			return nil
		}
	}
	return lockdriver.InvalidArgument("config", "unknown Layout "+strconv.Quote(string(b)))
}

// tagLen is the length of a cluster hash tag and of the tag at the start of
// a cluster lock id.
const tagLen = wire.TagLen

// resolveLayout returns the concrete layout for client, or an error for an
// unknown value or a prefix the cluster layout cannot use.
func resolveLayout(l Layout, client redis.UniversalClient, prefix string) (Layout, error) {
	// By the type of the client's options, so that a wrapper embedding the
	// go-redis client is judged as that client.
	if _, isRing := client.(interface{ Options() *redis.RingOptions }); isRing {
		// A Ring sends a key to the shard its hash picks among the shards it
		// believes up; when one is marked down its keys move to another, so
		// two clients can hold one key on two shards and the key's fences
		// restart on the new shard. go-redis documents Ring for caching.
		return 0, lockdriver.InvalidArgument("config", "a *redis.Ring cannot hold locks: it moves keys to other shards when one is marked down (two holders, fences restart); use a *redis.Client, a failover client or a *redis.ClusterClient")
	}
	_, isCluster := client.(interface{ Options() *redis.ClusterOptions })
	switch l {
	case LayoutAuto:
		if isCluster {
			l = LayoutCluster
		} else {
			l = LayoutSingle
		}
	case LayoutSingle, LayoutCluster:
	default:
		return 0, lockdriver.InvalidArgument("config", "unknown Layout")
	}
	if l == LayoutCluster && strings.ContainsAny(prefix, "{}") {
		return 0, lockdriver.InvalidArgument("config", "prefix must not contain '{' or '}' in the cluster layout (they would change the hash tag)")
	}
	return l, nil
}

// Layout returns the key layout in use (never LayoutAuto).
func (b *Backend) Layout() Layout { return b.layout }

// keyTag returns the cluster hash tag of a normalised user key: its
// stripe's with FenceStripes (stripes.go), else from SHA-256.
func (b *Backend) keyTag(norm string) string {
	if b.stripes > 0 {
		return stripeTag(b.stripe(norm))
	}
	sum := sha256.Sum256([]byte(b.prefix + ":" + norm))
	return base64.RawURLEncoding.EncodeToString(sum[:3])[:tagLen] // 3 bytes -> 4 chars
}

// keyPrefix is the prefix that MakeStorageKey gets for the lock key of norm:
// the prefix, plus ":{T}" in the cluster layout.
func (b *Backend) keyPrefix(norm string) string {
	if b.layout != LayoutCluster {
		return b.prefix
	}
	return wire.TagPrefix(b.prefix, b.keyTag(norm))
}

// tagPrefix returns the prefix of the keys derived from lockKey (fence, done
// marker, record): the prefix, plus the lock key's ":{T}" in the cluster
// layout.
func (b *Backend) tagPrefix(lockKey string) string {
	if b.layout != LayoutCluster {
		return b.prefix
	}
	// lockKey is "<prefix>:{T}:..." (keyPrefix).
	return lockKey[:len(b.prefix)+tagLen+3]
}

// indexPrefix returns the prefix of the index keys of locks on lockKey
// ("<prefix>:id:" or "<prefix>:{T}:id:"), for is_locked.lua's cleanup.
func (b *Backend) indexPrefix(lockKey string) string {
	if b.layout != LayoutCluster {
		return b.idPrefix
	}
	return wire.IndexPrefix(b.tagPrefix(lockKey))
}

// newLockID returns a fresh lock id for a lock on lockKey: lockdriver.NewLockID
// in the single layout; in the cluster layout the lock key's tag followed by
// 19 random base64url characters (114 bits from crypto/rand).
func (b *Backend) newLockID(lockKey string) string {
	if b.layout != LayoutCluster {
		return lockdriver.NewLockID()
	}
	var r [15]byte // 120 bits -> 20 chars; 19 kept
	if _, err := io.ReadFull(rand.Reader, r[:]); err != nil {
		panic("syncguard: crypto/rand failed: " + err.Error())
	}
	return b.lockTag(lockKey) + base64.RawURLEncoding.EncodeToString(r[:])[:lockdriver.LockIDLen-tagLen]
}

// lockTag returns the hash tag T of a cluster-layout lock key
// ("<prefix>:{T}:...").
func (b *Backend) lockTag(lockKey string) string {
	tp := b.tagPrefix(lockKey)
	return tp[len(tp)-tagLen-1 : len(tp)-1]
}

// indexKey returns the index key of a validated lock id.
func (b *Backend) indexKey(id string) string {
	if b.layout != LayoutCluster {
		// The prefix is short enough (MaxPrefixBytes) that this never needs
		// hashing: it equals MakeStorageKey(prefix, "id:"+id, KeyBudget, KeyReserve).
		return b.idPrefix + id
	}
	return wire.ClusterIndexKey(b.prefix, id)
}
