package grpclock

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// config is one interceptor's checked configuration.
type config struct {
	g           *core.Guard
	key         KeyFunc
	scope       ScopeFunc
	fingerprint FingerprintFunc
	stores      func(codes.Code) bool
	headers     map[string]bool // metadata keys replayed; nil: all
	maxMsg      int64
	maxReq      int64
}

// use names the constructor a configuration is for, for its checks.
type use int

const (
	forUnary use = iota
	forStream
	forLimiter
)

// newConfig applies opts and checks them with key: core.New's checks,
// then what gRPC does not take. Nothing reaches b.
func newConfig(b lock.Backend, key KeyFunc, opts []Option, u use) (*config, error) {
	var o setup
	settings.Apply(&o, opts)
	o.s.HasKey = key != nil
	if err := checkGRPC(&o.s, u); err != nil {
		return nil, err
	}
	g, err := core.New(b, o.s)
	if err != nil {
		return nil, err
	}
	c := &config{g: g, key: key, scope: o.scope, fingerprint: o.fingerprint, stores: o.stores}
	if c.stores == nil {
		c.stores = DefaultReplayCode
	}
	c.maxMsg, c.maxReq = g.ReplayMax()
	if o.s.Replay.Headers != nil {
		c.headers = map[string]bool{}
		for _, n := range o.s.Replay.Headers {
			c.headers[strings.ToLower(n)] = true
		}
	}
	return c, nil
}

// checkGRPC refuses the settings gRPC has no use for. (The HTTP answers'
// options, such as WithBusyHandler, are not grpclock's: they do not
// compile.)
func checkGRPC(s *settings.Settings, u use) error {
	switch {
	case s.ReplayOn && u == forStream:
		return s.Invalid("Replay.TTL", "a stream's messages are not replayed: use it on UnaryServerInterceptor")
	case u == forLimiter && s.Limit == 0:
		return s.Invalid("Limit", "NewLimiter needs the number of calls per window")
	case u == forLimiter && !s.Set["TTL"]:
		return s.Invalid("TTL", "NewLimiter needs the window: at most the limit's calls start in any window of this length")
	}
	for _, n := range s.Replay.Headers {
		if n = strings.ToLower(n); strings.HasPrefix(n, "grpc-") || reserved[n] {
			return s.Invalid("Replay.Headers", "the metadata key "+n+" is gRPC's own or the replay's")
		}
	}
	return nil
}

// callKey returns the lock key of a call: its route is its full method
// name.
func (c *config) callKey(ctx context.Context, method string, req any) (string, error) {
	var scope func() (string, error)
	if c.scope != nil {
		scope = func() (string, error) { return c.scope(ctx) }
	}
	return c.g.CallKey(method, scope, func() (string, error) { return c.key(ctx, req) })
}
