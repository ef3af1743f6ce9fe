// Package lock takes distributed locks with fencing tokens: [Do] runs a
// function holding a key, [Hold] holds it until released, [Acquire] only
// acquires. A [Lease] has a [Fence] growing per grant; a [Backend] stores
// leases. Guide: docs/lock.md; backend authors: package lock/lockdriver.
package lock
