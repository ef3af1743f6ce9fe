package redisbackend

import (
	"context"
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts, one per operation, each the concatenation of files of
// scripts/ (docs/client-retries.md, "How scripts run").
var (
	acquireScript     = newScript("prelude", "lib", "acquire")
	acquireSlotScript = newScript("prelude", "lib", "acquire_slot")
	acquireMarkScript = newScript("acquire_mark", "prelude", "lib", "acquire") // a mark answers before the prelude runs

	acquireRWScript = newScript("prelude", "lib", "rw_busy", "rw", "acquire_rw")

	// A release reads the lease's index (index_swap, index_read) before
	// rw.lua, which makes its helpers only for a read-write lock's holder.
	releaseScript        = newScript("prelude", "lib", "release", "index_swap", "rw", "rw_release", "release_lock", "handoff")
	releaseClusterScript = newScript("prelude", "lib", "release", "index_read", "rw", "rw_release", "release_lock", "handoff")
	releaseMarkScript    = newScript("prelude", "lib", "release_mark", "index_read", "rw", "rw_release", "release_lock", "handoff")
	releaseLeaveScript   = newScript("prelude", "lib", "release_leave", "index_read", "rw", "rw_release", "release_lock", "handoff")

	extendScript      = newScript("prelude", "lib", "index_get", "rw", "extend")
	lookupIDScript    = newScript("prelude", "lib", "index_get", "rw", "lookup_id")
	lookupRWScript    = newScript("prelude", "lib", "rw", "lookup_rw")
	lookupKeyScript   = newScript("prelude", "lib", "lookup_key")
	isLockedScript    = newScript("prelude", "lib", "is_locked")
	lookupLimitScript = newScript("prelude", "lib", "lookup_limit")
	isDoneScript      = newScript("is_done")    // one command: nothing of the prelude
	getRecordScript   = newScript("get_record") // one command: nothing of the prelude
)

//go:embed scripts/*.lua
var scriptFiles embed.FS

// script is one Lua script with its hash and source boxed once.
type script struct {
	*redis.Script
	hashArg any
	srcArg  any
}

// newScript returns the script made of the files scripts/<name>.lua, in
// order, each ending with a newline.
func newScript(names ...string) *script {
	var src strings.Builder
	for _, name := range names {
		raw, err := scriptFiles.ReadFile("scripts/" + name + ".lua")
		if err != nil {
			panic("redisbackend: " + err.Error())
		}
		src.Write(raw)
		if len(raw) > 0 && raw[len(raw)-1] != '\n' {
			src.WriteByte('\n')
		}
	}
	s := redis.NewScript(src.String())
	return &script{Script: s, hashArg: s.Hash(), srcArg: src.String()}
}

// Command names, boxed once so a call does not allocate to pass them.
var (
	evalshaArg any = "evalsha"
	evalArg    any = "eval"
)

// scriptCmd is one call of a script: its EVALSHA command line.
type scriptCmd struct {
	s    *script
	args []any
}

// cmd is "EVALSHA <hash> <nKeys> <vals...>", in one allocation.
func (s *script) cmd(nKeys int, vals ...any) scriptCmd {
	a := make([]any, 3+len(vals))
	a[0], a[1], a[2] = evalshaArg, s.hashArg, nKeys
	copy(a[3:], vals)
	return scriptCmd{s: s, args: a}
}

// run sends c and returns its reply, sending EVAL after NOSCRIPT.
func (b *Backend) run(ctx context.Context, c scriptCmd) *redis.Cmd {
	cmd := b.send(ctx, c.args)
	// (HasErrorPrefix allocates even for a nil error.)
	if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		eval := make([]any, len(c.args))
		copy(eval, c.args)
		eval[0], eval[1] = evalArg, c.s.srcArg
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
		// The command may still be answered: give the caller its own.
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(err)
	}
	return cmd
}
