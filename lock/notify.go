package lock

// Notifier is an optional Backend interface: a release wakes waiters of
// that key instead of leaving them to poll.
//
// [Acquire] and [Do] detect it with a type assertion on the Backend. On
// the first contention they call WatchKey, try once more at once (a
// release between the failed attempt and the watch would otherwise go
// unnoticed), and then wait for whichever comes first: the watch, the
// backoff timer, or the end of ctx. The backoff timer keeps running as
// the bounded-polling fallback: a holder that dies and lets its lease
// expire publishes nothing, nor do clients that do not publish releases.
//
// A watch is one-shot: ch receives at most one value. Acquire consumes it,
// registers a new watch (at the back of the key's queue) and then tries
// again, so a release during that attempt is not missed.
type Notifier interface {
	// WatchKey registers interest in key; ch receives (or is closed) when a
	// lease on key is released — possibly spuriously — and cancel
	// unregisters. It must not block and must be cheap.
	//
	// A nil ch (which never fires in a select) means notifications are
	// unavailable; the caller then polls. cancel is never nil, may be
	// called more than once, and must be called when the caller stops
	// waiting: a wake-up that reached a watch whose owner did not consume
	// it is handed to another waiter of the key. After cancel the caller
	// must not receive from ch.
	WatchKey(key string) (ch <-chan struct{}, cancel func())
}
