// Package specmin holds the spec-minimal scripts: syncguard's wire format
// (seed 000, the Redis backend specification) done with the least the
// specification requires. The bench's spec-minimal rows and the scriptcost
// program both run them, so the floor they measure is one text.
package specmin

import _ "embed"

var (
	// Acquire is acquire.lua: KEYS lock, index and fence key; ARGV lock id,
	// ttl in ms, user key. It returns {1, fence, expiresAtMs}, or 0 when the
	// key is held.
	//
	//go:embed acquire.lua
	Acquire string

	// Release is release.lua: KEYS index key; ARGV lock id. It returns 1
	// released, 0 owned by another lease, -1 not found.
	//
	//go:embed release.lua
	Release string
)
