package core

import (
	"context"
	"log/slog"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// logKey is the context key of a request's logger (Exchange.Log).
type logKey struct{}

// withLog returns ctx carrying l; ctx itself when l is nil.
func withLog(ctx context.Context, l *slog.Logger) context.Context {
	if l == nil {
		return ctx
	}
	return context.WithValue(ctx, logKey{}, l)
}

// logOf returns the logger ctx carries, or slog's default logger.
func logOf(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(logKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// logDenied logs err, the refusal of a request's lock on key, when the
// backend refused the server's credentials or permissions
// (lock.CodeAuthFailed): a misconfiguration that no retry fixes (lock.Do
// tried once) and that every request meets until it is fixed.
func (g *Guard) logDenied(ctx context.Context, key string, err error) {
	if lock.CodeOf(err) != lock.CodeAuthFailed {
		return
	}
	logOf(ctx).ErrorContext(ctx, "syncguard: the lock backend refused the server's Redis credentials or permissions; fix its Redis user or ACL rule (docs/acl.md)",
		"key_hash", lockdriver.HashKey(key), "fail_open", g.failOpen, "error", err)
}
