package otellock

import "github.com/syncguard-go/syncguard/lock"

// An operation's span and measurements are named after its lock.OpKind:
// the span of kind k is "syncguard." + k.String(), and a backend call's
// measurements carry syncguard.operation = k.String().

// numKinds bounds the lock.OpKind values, for the precomputed names and
// attribute sets.
const numKinds = lock.OpReleaseMulti + 1

// spanNames are the span names per kind.
var spanNames = func() (names [numKinds]string) {
	for k := lock.OpAcquire; k < numKinds; k++ {
		names[k] = "syncguard." + k.String()
	}
	return names
}()

// measured reports whether syncguard.operation.duration measures calls of
// kind k. ExtendBatch is not: its leases are measured as extends.
func measured(k lock.OpKind) bool {
	return k >= lock.OpAcquire && k <= lock.OpRecord && k != lock.OpExtendBatch
}
