package wire

import (
	"slices"
	"strconv"
	"strings"
)

// The storage key budget: a storage key is at most KeyBudget bytes, and
// MakeStorageKey keeps KeyReserve of them for the longest derived name.
const (
	KeyBudget  = 1000
	KeyReserve = 26
)

// TagLen is the length of a cluster hash tag T. In the cluster layout every
// key of a lock begins with "<prefix>:{T}", and its lock id with T.
const TagLen = 3

// ConfigKeyName follows "<prefix>:" in the name of the backends'
// configuration record. The user key of that name is refused.
const ConfigKeyName = SegConfig + ":backend"

// ReservedPrefixSegment reports whether seg may not be a segment of a key
// prefix.
func ReservedPrefixSegment(seg string) bool {
	return seg == SegConfig || slices.Contains(ReservedSegments, seg)
}

// TagPrefix returns "<prefix>:{<tag>}", the start of a cluster lock's keys.
func TagPrefix(prefix, tag string) string { return prefix + ":{" + tag + "}" }

// CutTagPrefix splits "<prefix>:{T}:<rest>" into "<prefix>:{T}" and rest.
func CutTagPrefix(prefix, name string) (tagPrefix, rest string, ok bool) {
	rest, ok = strings.CutPrefix(name, prefix+":")
	if !ok || len(rest) < TagLen+3 || rest[0] != '{' || rest[TagLen+1] != '}' || rest[TagLen+2] != ':' {
		return "", "", false
	}
	return name[:len(prefix)+TagLen+3], rest[TagLen+3:], true
}

// IndexPrefix returns "<tag prefix>:id:".
func IndexPrefix(tagPrefix string) string { return tagPrefix + ":" + SegID + ":" }

// IndexKey returns a lease's index key, "<tag prefix>:id:<lock id>".
func IndexKey(tagPrefix, lockID string) string { return tagPrefix + ":" + SegID + ":" + lockID }

// ClusterIndexKey returns the index key of a lock id in the cluster
// layout.
func ClusterIndexKey(prefix, lockID string) string {
	return prefix + ":{" + lockID[:TagLen] + "}:" + SegID + ":" + lockID
}

// FenceKey returns "<tag prefix>:fence:<lock key>", hashed when too long.
func FenceKey(tagPrefix, lockKey string) (string, error) {
	if len(tagPrefix)+len(SegFence)+2+len(lockKey) <= KeyBudget-KeyReserve {
		// One allocation.
		return tagPrefix + ":" + SegFence + ":" + lockKey, nil
	}
	return MakeStorageKey(tagPrefix, SegFence+":"+lockKey, KeyBudget, KeyReserve)
}

// StripeKey returns "<tag prefix>:fence::<i>", which no lock key's fence
// key can be.
func StripeKey(tagPrefix string, i int) string {
	return tagPrefix + ":" + SegFence + "::" + strconv.Itoa(i)
}

// IsStripe reports whether a fence key's name names a stripe's counter.
func IsStripe(rest string) bool { return strings.HasPrefix(rest, SegFence+"::") }

// DoneKey returns "<tag prefix>:done:<lock key>", hashed when too long.
func DoneKey(tagPrefix, lockKey string) (string, error) {
	return MakeStorageKey(tagPrefix, SegDone+":"+lockKey, KeyBudget, KeyReserve)
}

// RecordKey returns "<tag prefix>:record:<lock key>", hashed when too long.
func RecordKey(tagPrefix, lockKey string) (string, error) {
	return MakeStorageKey(tagPrefix, SegRecord+":"+lockKey, KeyBudget, KeyReserve)
}

// QueuePrefix returns "<prefix>:queue:", in both layouts.
func QueuePrefix(prefix string) string { return prefix + ":" + SegQueue + ":" }

// QueueKey returns "<prefix>:queue:<lock key>".
func QueueKey(prefix, lockKey string) string { return prefix + ":" + SegQueue + ":" + lockKey }
