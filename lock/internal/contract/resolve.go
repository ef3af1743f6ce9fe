package contract

import "time"

// ResolveOptions returns what a []lock.Option (opts) sets that an adapter
// built on lock must know: the lease TTL, the heartbeat (a lock.Heartbeat)
// and whether WithLimit was given; or the error of validating them. lock
// sets it in its init, as ValidateOptions.
var ResolveOptions func(opts any) (ttl time.Duration, heartbeat any, limited bool, err error)
