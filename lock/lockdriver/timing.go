package lockdriver

import "github.com/syncguard-go/syncguard/lock/internal/contract"

// TimeTolerance is syncguard's fixed clock tolerance: a lease counts as
// live until TimeTolerance after its expiry, so small clock differences
// between the store's nodes never shorten a lease.
const TimeTolerance = contract.TimeTolerance // 1s

// QueuedPollInterval bounds how often a waiter in a backend's queue (see
// lock.IDBackend's Join) attempts on its own: a release hands it the lock,
// and it attempts only as a fallback, when the holder's lease has ended or
// QueuedPollInterval after its last attempt, whichever comes first.
const QueuedPollInterval = contract.QueuedPollInterval // 1s
