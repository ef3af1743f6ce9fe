package lock

import "time"

// TimeTolerance is syncguard's fixed clock tolerance: a lease counts as
// live until TimeTolerance after its expiry, so small clock differences
// between the store's nodes never shorten a lease.
const TimeTolerance = time.Second
