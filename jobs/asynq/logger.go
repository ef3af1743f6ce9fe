package asynqlock

import (
	"context"
	"fmt"
	stdlog "log"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
)

// revokeLine begins asynq's warning for a revoked task. If a new asynq
// words it otherwise, the lines are logged as before.
const revokeLine = "revoke task id="

// Logger returns an asynq.Logger for asynq.Config.Logger. It passes every
// line to base, except asynq's "revoke task" warning for a task this Guard
// dropped: asynq logs one per dropped task, so a burst of duplicates would
// flood the log. The drop itself is unchanged, and the ErrorHandler still
// sees it. A nil base writes to standard error as asynq's default logger
// does. docs/asynq.md has the details.
//
//	srv := asynq.NewServer(redisOpt, asynq.Config{
//		Logger:         guard.Logger(nil), // no warning per dropped duplicate
//		IsFailure:      asynqlock.IsFailure,
//		RetryDelayFunc: asynqlock.RetryDelay(nil),
//	})
func (g *Guard) Logger(base asynq.Logger) asynq.Logger {
	if base == nil {
		base = newStdLogger()
	}
	g.drops.on.Store(true)
	return &quietLogger{Logger: base, drops: &g.drops}
}

// quietLogger is the asynq.Logger of (*Guard).Logger.
type quietLogger struct {
	asynq.Logger
	drops *dropLog
}

// Warn passes args to the base logger unless they are asynq's revocation
// warning for a task the Guard dropped.
func (l *quietLogger) Warn(args ...any) {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			if id, ok := strings.CutPrefix(s, revokeLine); ok && l.drops.take(id) {
				return
			}
		}
	}
	l.Logger.Warn(args...)
}

// dropLog remembers the ids of the tasks a Guard dropped, until asynq
// logs their revocation.
type dropLog struct {
	on atomic.Bool // set by Logger; nothing is recorded before

	mu      sync.Mutex
	ids     map[string]time.Time // task id -> when it was dropped
	sweepAt int                  // len(ids) that triggers a sweep
}

// Entries older than dropLogAge are swept once the log holds
// dropLogSweep entries (or twice as many as after the last sweep).
const (
	dropLogAge   = time.Minute
	dropLogSweep = 1024
)

// add records the task of ctx when err drops it and Logger is in use.
func (d *dropLog) add(ctx context.Context, err error) {
	if !d.on.Load() || !dropped(err) {
		return
	}
	id, ok := asynq.GetTaskID(ctx)
	if !ok {
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = make(map[string]time.Time)
	}
	if len(d.ids) >= max(d.sweepAt, dropLogSweep) {
		for k, at := range d.ids {
			if now.Sub(at) > dropLogAge {
				delete(d.ids, k)
			}
		}
		d.sweepAt = 2 * len(d.ids)
	}
	d.ids[id] = now
}

// take reports whether id was recorded, and forgets it.
func (d *dropLog) take(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.ids[id]
	delete(d.ids, id)
	return ok
}

// stdLogger writes lines to standard error as asynq's default logger does.
type stdLogger struct{ l *stdlog.Logger }

func newStdLogger() *stdLogger {
	prefix := fmt.Sprintf("asynq: pid=%d ", os.Getpid())
	return &stdLogger{stdlog.New(os.Stderr, prefix, stdlog.Ldate|stdlog.Ltime|stdlog.Lmicroseconds|stdlog.LUTC)}
}

func (s *stdLogger) Debug(args ...any) { s.print("DEBUG: ", args) }
func (s *stdLogger) Info(args ...any)  { s.print("INFO: ", args) }
func (s *stdLogger) Warn(args ...any)  { s.print("WARN: ", args) }
func (s *stdLogger) Error(args ...any) { s.print("ERROR: ", args) }

// Fatal logs and exits, as asynq's default logger does.
func (s *stdLogger) Fatal(args ...any) {
	s.print("FATAL: ", args)
	os.Exit(1)
}

func (s *stdLogger) print(level string, args []any) {
	s.l.Print(append([]any{level}, args...)...)
}
