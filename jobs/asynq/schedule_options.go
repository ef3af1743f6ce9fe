package asynqlock

import (
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// DefaultCatchUp is an entry's catch-up window unless CatchUp says
// otherwise: a new term enqueues the latest tick missed within the last
// hour.
const DefaultCatchUp = time.Hour

// MaxEntryName is the longest name EntryName accepts, in bytes.
const MaxEntryName = 64

// The option types of EntryName and CatchUp, apart from asynq's: the
// Scheduler takes them out before asynq sees the options.
const (
	entryNameOpt asynq.OptionType = -1 - iota
	catchUpOpt
)

// schedOption is an option of Register that asynq does not know.
type schedOption struct {
	typ asynq.OptionType
	val any
}

func (o schedOption) Type() asynq.OptionType { return o.typ }
func (o schedOption) Value() any             { return o.val }

func (o schedOption) String() string {
	if o.typ == entryNameOpt {
		return fmt.Sprintf("asynqlock.EntryName(%q)", o.val)
	}
	return fmt.Sprintf("asynqlock.CatchUp(%v)", o.val)
}

// EntryName is an option of Scheduler.Register naming the entry: the
// name is its id, the same whatever its spec, task and options, so a
// deploy that edits the entry keeps its record and never enqueues a tick
// that already ran. A name is 1 to MaxEntryName bytes of ASCII letters,
// digits, '.', '_' and '-'.
func EntryName(name string) asynq.Option { return schedOption{entryNameOpt, name} }

// CatchUp is an option of Scheduler.Register setting the entry's catch-up
// window: a new term enqueues the latest tick it finds missed no longer
// than window ago (DefaultCatchUp when not given). CatchUp(0) enqueues no
// missed tick.
func CatchUp(window time.Duration) asynq.Option { return schedOption{catchUpOpt, window} }

// validName reports whether name is a valid EntryName.
func validName(name string) bool {
	if name == "" || len(name) > MaxEntryName {
		return false
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
