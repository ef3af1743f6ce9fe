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
// LayoutSingle is the TypeScript library's layout. LayoutCluster puts the
// hash tag {T} in every key of a lock, so that they share one hash slot,
// and starts the lock id with T. Do not mix the layouts on one prefix.
// docs/cluster.md lists both layouts' keys and rules.
type Layout int

const (
	// LayoutAuto, the default, picks LayoutCluster for a
	// *redis.ClusterClient or a wrapper embedding one, else LayoutSingle.
	LayoutAuto Layout = iota
	// LayoutSingle is the syncguard (TypeScript) key layout, for a single
	// Redis or a replicated primary (Sentinel). Its multi-key scripts fail
	// with CROSSSLOT on Redis Cluster.
	LayoutSingle
	// LayoutCluster keeps every key of one lock in one hash slot. It works
	// on a single Redis too, but the TypeScript library cannot read it.
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

// MarshalText encodes l as its String, for JSON and other text formats.
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
	// By the client's Options method, so a wrapper is judged as its client.
	if _, isRing := client.(interface{ Options() *redis.RingOptions }); isRing {
		// A Ring moves a down shard's keys to another shard: two holders,
		// and fences that restart.
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
// stripe's with FenceStripes, else from SHA-256; both of the key's own
// hash tag when it has one (slotSource).
func (b *Backend) keyTag(norm string) string {
	if b.stripes > 0 {
		return stripeTag(b.stripe(b.slotSource(norm)))
	}
	sum := sha256.Sum256([]byte(b.prefix + ":" + b.slotSource(norm)))
	return base64.RawURLEncoding.EncodeToString(sum[:3])[:tagLen] // 3 bytes -> 4 chars
}

// slotSource returns what picks the hash tag of a user key in the cluster
// layout: the key's own hash tag, "{x}" as Redis Cluster reads it (the
// first "{" followed by a "}" with something between), when it has one,
// so that keys sharing a hash tag share a slot and a multi-key lock takes
// them in one script; else the whole key.
func (b *Backend) slotSource(norm string) string {
	if b.layout != LayoutCluster {
		return norm
	}
	open := strings.IndexByte(norm, '{')
	if open < 0 {
		return norm
	}
	end := strings.IndexByte(norm[open+1:], '}')
	if end <= 0 {
		return norm
	}
	return norm[open : open+end+2]
}

// keyPrefix is the prefix, plus ":{T}" in the cluster layout, that
// MakeStorageKey gets for the lock key of norm.
func (b *Backend) keyPrefix(norm string) string {
	if b.layout != LayoutCluster {
		return b.prefix
	}
	return wire.TagPrefix(b.prefix, b.keyTag(norm))
}

// tagPrefix returns the prefix of the keys derived from lockKey: the
// prefix, plus the lock key's ":{T}" in the cluster layout.
func (b *Backend) tagPrefix(lockKey string) string {
	if b.layout != LayoutCluster {
		return b.prefix
	}
	// lockKey is "<prefix>:{T}:..." (keyPrefix).
	return lockKey[:len(b.prefix)+tagLen+3]
}

// indexPrefix returns the prefix of the index keys of locks on lockKey,
// for is_locked.lua's cleanup.
func (b *Backend) indexPrefix(lockKey string) string {
	if b.layout != LayoutCluster {
		return b.idPrefix
	}
	return wire.IndexPrefix(b.tagPrefix(lockKey))
}

// newLockID returns a fresh lock id for a lock on lockKey. In the cluster
// layout it is the lock key's tag and 19 random base64url characters.
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

// lockTag returns the hash tag T of a cluster-layout lock key.
func (b *Backend) lockTag(lockKey string) string {
	tp := b.tagPrefix(lockKey)
	return tp[len(tp)-tagLen-1 : len(tp)-1]
}

// indexKey returns the index key of a validated lock id.
func (b *Backend) indexKey(id string) string {
	if b.layout != LayoutCluster {
		// Never hashed: MaxPrefixBytes keeps it within the budget.
		return b.idPrefix + id
	}
	return wire.ClusterIndexKey(b.prefix, id)
}
