package lockdriver

import "github.com/syncguard-go/syncguard/lock/internal/contract"

// TimeTolerance is syncguard's clock tolerance: a lease counts as live
// until TimeTolerance after its expiry.
const TimeTolerance = contract.TimeTolerance // 1s

// QueuedPollInterval is the longest a queued waiter goes without an
// attempt of its own.
const QueuedPollInterval = contract.QueuedPollInterval // 1s
