package redisbackend

import (
	"context"
	_ "embed"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// The Lua scripts, one per operation, run with EVALSHA and resent as EVAL
// (which loads them) on NOSCRIPT, as redis.Script does. Each starts with
// scripts/prelude.lua (see newScript). Those of a lock's and a slot's
// cycle (acquire, release, acquire_slot) run as Redis 7 functions where
// the server has them (functions.go).
var (
	//go:embed scripts/prelude.lua
	preludeSrc string
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/extend.lua
	extendSrc string
	//go:embed scripts/lookup_id.lua
	lookupIDSrc string
	//go:embed scripts/lookup_key.lua
	lookupKeySrc string
	//go:embed scripts/is_locked.lua
	isLockedSrc string
	//go:embed scripts/is_done.lua
	isDoneSrc string
	//go:embed scripts/get_record.lua
	getRecordSrc string
	//go:embed scripts/acquire_slot.lua
	acquireSlotSrc string
	//go:embed scripts/lookup_limit.lua
	lookupLimitSrc string

	acquireScript = newScript(acquireSrc)
	releaseScript = newScript(releaseSrc)

	// functionLib holds the scripts of a lock's and a slot's cycle as
	// functions (functions.go).
	functionLib = newLibrary(map[string]*script{
		"acquire": acquireScript, "release": releaseScript, "acquire_slot": acquireSlotScript,
	})
	extendScript    = newScript(extendSrc)
	lookupIDScript  = newScript(lookupIDSrc)
	lookupKeyScript = newScript(lookupKeySrc)
	isLockedScript  = newScript(isLockedSrc)
	isDoneScript    = newScript(isDoneSrc)
	getRecordScript = newScript(getRecordSrc)

	acquireSlotScript = newScript(acquireSlotSrc)
	lookupLimitScript = newScript(lookupLimitSrc)
)

// toleranceArg is wire.TimeToleranceMs, boxed once: every script that
// judges a lease live takes it as an ARGV.
var toleranceArg any = strconv.FormatInt(wire.TimeToleranceMs, 10)

// Command names, boxed once so a call does not allocate to pass them.
var (
	evalshaArg any = "evalsha"
	evalArg    any = "eval"
)

// script is one Lua script with its hash and source boxed once.
type script struct {
	*redis.Script        // Hash and Load, for pipelines that build their own commands
	hashArg       any    // the SHA1, as EVALSHA's first argument
	srcArg        any    // the source, for EVAL after NOSCRIPT
	body          string // the script's own file, for the function library
	// fnArg is the name of the script's function in functionLib, as
	// FCALL's first argument; nil for a script that is not one.
	fnArg any
}

// newScript returns the script whose body is prelude.lua followed by body:
// the constants and helpers every script shares (server time, lock-data
// decoding, tombstones), in the source that is hashed and sent, so each
// script is still one self-contained EVAL body and needs nothing loaded
// before it. The prelude's helper functions are not sent as they are: a
// local function is a closure made on every run of the script, used or
// not, so each call of a helper in body becomes the helper's code as an
// anonymous function called in place (expandHelpers), which costs only
// the runs that reach it. Line numbers in a script's runtime errors count
// the prelude's constants and the expanded lines.
//
// What a lock cycle costs Redis (acquire.lua and release.lua, a new key,
// nobody waiting) is measured by TestScriptCost, side by side with seed
// 000's scripts: go test ./redisbackend/ -run TestScriptCost -v -args
// -scriptcost (-scriptcost.callgrind counts instructions instead of µs).
func newScript(body string) *script {
	src := preludeConsts + expandHelpers(body)
	s := redis.NewScript(src)
	return &script{Script: s, hashArg: s.Hash(), srcArg: src, body: body}
}

// args starts the command line of a call of s with nKeys keys and room
// for nArgs more values: an FCALL of its function while b uses functions
// (functions.go), else an EVALSHA. The caller appends the keys, then ARGV.
// One allocation for the whole command line.
func (b *Backend) args(s *script, nKeys, nArgs int) []any {
	a := make([]any, 3, 3+nKeys+nArgs)
	a[0], a[1], a[2] = evalshaArg, s.hashArg, nKeys
	if s.fnArg != nil && b.functions.Load() {
		a[0], a[1] = fcallArg, s.fnArg
	}
	return a
}

// run sends a command line built by b.args and returns its reply. The
// calls of concurrent goroutines share pipelines (Options.DisableCoalescing,
// internal/transport). An FCALL the server cannot run (no library loaded,
// no functions) goes on as functions.go says. A server that lost its
// script cache (restart, failover, SCRIPT FLUSH) answers NOSCRIPT; the
// command is then sent again as EVAL, which loads the script.
func (b *Backend) run(ctx context.Context, s *script, args []any) *redis.Cmd {
	cmd := b.send(ctx, args)
	if args[0] == fcallArg {
		var again bool
		if cmd, again = b.fcallFailed(ctx, args, cmd); !again {
			return cmd
		}
		evalsha := make([]any, len(args))
		copy(evalsha, args)
		evalsha[0], evalsha[1] = evalshaArg, s.hashArg
		args = evalsha
		cmd = b.send(ctx, args)
	}
	// (HasErrorPrefix allocates even for a nil error.)
	if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		eval := make([]any, len(args))
		copy(eval, args)
		eval[0], eval[1] = evalArg, s.srcArg
		cmd = b.send(ctx, eval)
	}
	return cmd
}

// send sends one command line, bounded by ctx (transport.Sender.Do).
func (b *Backend) send(ctx context.Context, args []any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	if n, _ := args[2].(int); n > 0 {
		cmd.SetFirstKeyPos(3) // cluster routing: the first key picks the slot
	}
	if err := b.sender.Do(ctx, cmd); err != nil {
		// The command may still be answered in the background: hand the
		// caller a command of its own.
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(err)
	}
	return cmd
}
