package core

import (
	"context"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Config is the shape of the settings the tests of this package use: a
// key function is always given.
type Config struct {
	Prefix      string
	TTL, Wait   time.Duration
	LockOptions []lock.Option
	NoRoute     bool
	Unscoped    bool
	Replay      *ReplayConfig
	Limit       int
}

// ReplayConfig is replay mode's part of Config.
type ReplayConfig = settings.Replay

// newFrom is New for c.
func newFrom(b lock.Backend, c Config) (*Guard, error) {
	s := settings.Settings{Prefix: c.Prefix, TTL: c.TTL, Wait: c.Wait, LockOptions: c.LockOptions,
		Unscoped: c.Unscoped, Limit: c.Limit, HasKey: true}
	if c.NoRoute {
		s.RouteScope = settings.RouteOff
	}
	if c.Replay != nil {
		s.ReplayOn, s.Replay = true, *c.Replay
	}
	return New(b, s)
}

// WriteBusy is the default busy answer on ctx.
func WriteBusy(ctx context.Context, w http.ResponseWriter, retryAfter time.Duration, err error) {
	guard.DefaultBusyHandler(w, httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx), retryAfter, err)
}

// WriteError is the default error answer on ctx.
func WriteError(ctx context.Context, w http.ResponseWriter, err error) {
	guard.DefaultErrorHandler(w, httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx), err)
}
