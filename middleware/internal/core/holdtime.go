package core

import (
	"sync"
	"time"
)

// maxHoldRoutes bounds the routes whose hold time a Guard tracks: routes
// from escaped request paths (no pattern) are unbounded. Routes beyond it
// get no estimate, and Retry-After falls back to the holder's lease.
const maxHoldRoutes = 1024

// holdWeight is the weight of a new sample in the moving average: about
// the last ten runs count.
const holdWeight = 0.2

// holdTimes keeps an exponentially weighted moving average of how long
// handlers hold the lock, per route, for the Retry-After estimate.
type holdTimes struct {
	mu  sync.Mutex
	avg map[string]time.Duration
}

// observe adds a run of route that held the lock for d.
func (h *holdTimes) observe(route string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.avg == nil {
		h.avg = map[string]time.Duration{}
	}
	prev, ok := h.avg[route]
	switch {
	case ok:
		h.avg[route] = prev + time.Duration(holdWeight*float64(d-prev))
	case len(h.avg) < maxHoldRoutes:
		h.avg[route] = d
	}
}

// estimate returns the average hold time of route, if it has one.
func (h *holdTimes) estimate(route string) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.avg[route]
	return d, ok
}
