package guard

import (
	"context"
	"log/slog"
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
