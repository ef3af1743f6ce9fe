package core

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// neverReplayed are headers the replay computes itself or that describe
// the connection: they cannot be allow-listed.
var neverReplayed = []string{
	"Connection", "Content-Length", "Keep-Alive", "Proxy-Connection", "Te",
	"Trailer", "Transfer-Encoding", "Upgrade", guard.HeaderReplayed, guard.HeaderNotStored,
}

// replay is checked replay settings and the backend's Recorder.
type replay struct {
	rec        lock.Recorder
	ttl        time.Duration
	maxBody    int64
	maxReqBody int64
	headers    map[string]bool // canonical names
	statuses   func(int) bool
}

func newReplay(b lock.Backend, s *settings.Settings) (*replay, error) {
	c := s.Replay
	rec, ok := b.(lock.Recorder)
	switch {
	case !ok:
		return nil, s.Invalid("Replay", fmt.Sprintf(
			"replay needs a backend that stores responses (lock.Recorder, such as redisbackend.Backend or otellock.Wrap of one); %T is not one", b))
	case b.Capabilities().FencePerKey:
		return nil, s.Invalid("Backend", "replay keys are one per request, and this backend keeps a fence counter per key that never expires, "+
			"so Redis would grow by a key per request: build it with striped fence counters (redisbackend.Options.FenceStripes)")
	case c.TTL < 0, c.TTL > 0 && c.TTL < guard.MinReplayTTL:
		return nil, s.Invalid("Replay.TTL", "must be at least "+guard.MinReplayTTL.String())
	case c.MaxBody < 0:
		return nil, s.Invalid("Replay.MaxBody", "must not be negative")
	case c.MaxRequestBody < 0:
		return nil, s.Invalid("Replay.MaxRequestBody", "must not be negative")
	}
	rp := &replay{rec: rec, ttl: cmp.Or(c.TTL, guard.DefaultReplayTTL), maxBody: cmp.Or(c.MaxBody, guard.DefaultReplayMaxBody),
		maxReqBody: cmp.Or(c.MaxRequestBody, guard.DefaultReplayMaxRequestBody), headers: map[string]bool{}, statuses: c.Statuses}
	if rp.statuses == nil {
		rp.statuses = guard.DefaultReplayStatus
	}
	names := c.Headers
	if names == nil {
		names = guard.DefaultReplayHeaders()
	}
	for _, n := range names {
		if !wire.ValidHeaderName(n) {
			return nil, s.Invalid("Replay.Headers", fmt.Sprintf("%q is not a valid header name", n))
		}
		cn := http.CanonicalHeaderKey(n)
		if slices.Contains(neverReplayed, cn) {
			return nil, s.Invalid("Replay.Headers", fmt.Sprintf("%q cannot be replayed (the replay sets it, or it belongs to the connection)", n))
		}
		rp.headers[cn] = true
	}
	return rp, nil
}

// storable reports whether a response with status is stored.
func (rp *replay) storable(status int) bool {
	return status >= 200 && status <= 599 && rp.statuses(status)
}

// writeReplay writes the stored response r to w, byte for byte, with
// HeaderReplayed: the status, the stored headers and trailers that are
// still allowed, the body. Headers already on w that the response does
// not store (set by middleware in front, such as a request id) stay.
// Trailers are declared (the Trailer header) before WriteHeader, so that
// net/http sends the body chunked and the trailers after it.
func (rp *replay) writeReplay(w http.ResponseWriter, r *wire.Record) {
	h := w.Header()
	for name, vs := range r.Header {
		if rp.headers[name] {
			h[name] = slices.Clone(vs)
		}
	}
	h.Set(guard.HeaderReplayed, "true")
	var trailers []string
	for name := range r.Trailer {
		if rp.headers[name] {
			trailers = append(trailers, name)
		}
	}
	slices.Sort(trailers)
	if len(trailers) > 0 {
		h.Set("Trailer", strings.Join(trailers, ", "))
	} else {
		h.Set("Content-Length", strconv.Itoa(len(r.Body)))
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write(r.Body)
	for _, name := range trailers {
		h[name] = slices.Clone(r.Trailer[name])
	}
}
