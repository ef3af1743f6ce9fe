package redisbackend

// QueuedCalls reports how many script calls wait in b's coalescing queue
// (0 without coalescing), for tests that must know the queue has formed.
func QueuedCalls(b *Backend) int { return b.sender.Queued() }

// InFlightTrips reports how many round trips b's coalescer has under way.
func InFlightTrips(b *Backend) int { return b.sender.InFlight() }
