package redisbackend

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// Redis 7 functions. The scripts of a lock's cycle and of a limit's slot,
// acquire.lua, release.lua and acquire_slot.lua, are also one function
// library, loaded once per server (FUNCTION LOAD) and called with FCALL:
// the library's top level (prelude.lua, its constants and helpers) runs
// once, at the load, where an EVALSHA runs it on every call, and the call
// itself costs Redis less (bench/README.md has the figures).
//
// The library's name and its functions' names carry a hash of its source
// ("syncguard_<hash>", "syncguard_<hash>_acquire"): instances of other
// versions of this module, with other scripts, load their own library next
// to it and never call another version's functions. A library is small;
// FUNCTION DELETE of one is safe at any time (the next call
// loads it again).
//
// A Backend starts with functions unless it has ReplicaAck (which
// pipelines its own EVALSHA). Its first FCALL on a server without the
// library gets "Function not found": it loads the library (on every master
// of a cluster client) and sends the FCALL again.
// Nothing ran on either error, so the scripts' own retry safety is not
// needed for this. A server without functions (before Redis 7, or
// miniredis), a user whose ACL denies FCALL or FUNCTION LOAD, or a library
// the server will not load turns functions off for the Backend for good:
// the call, and every later one, goes out as EVALSHA.
//
// Functions differ from EVALSHA in one observable way: Redis refuses an
// FCALL of a function without the allow-oom flag while it is over
// maxmemory, before the function runs, where a script is refused at its
// first write. At maxmemory, an Acquire of a busy key therefore returns
// ServiceUnavailable instead of ErrLocked; nothing is written in either
// case.

// fcallArg is FCALL's name, boxed once.
var fcallArg any = "fcall"

// library is a Redis function library made of scripts.
type library struct {
	name string // the library's name, as FUNCTION LOAD gets it in its first line
	src  string // the source FUNCTION LOAD gets
}

// libOnce follows prelude.lua in the library: lib's table of functions
// (the limits' helpers, and striped fences) is made once, at the load, where
// a script makes it on every call that uses it. Its functions keep nothing
// of a call: all they use comes in their arguments or is a constant.
const libOnce = "\ndo local L = lib(); lib = function() return L end end\n"

// newLibrary returns the library of scripts, by function name suffix, and
// sets each script's fnArg. Its top level is prelude.lua as written, whose
// helpers are then local functions made once, at the load (libOnce).
func newLibrary(scripts map[string]*script) *library {
	names := make([]string, 0, len(scripts))
	for n := range scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	// The name is a hash of everything the library runs but the name
	// itself, which is in it: two sources never share a name.
	const fnOpen, fnClose = "', function(KEYS, ARGV)\n", "\nend)\n"
	h := sha1.New()
	h.Write([]byte(preludeSrc + libOnce + fnOpen + fnClose))
	for _, n := range names {
		h.Write([]byte("\x00" + n + "\x00" + scripts[n].body))
	}
	name := "syncguard_" + hex.EncodeToString(h.Sum(nil)[:8])
	var src strings.Builder
	src.WriteString("#!lua name=" + name + "\n" + preludeSrc + libOnce)
	for _, n := range names {
		fn := name + "_" + n
		scripts[n].fnArg = fn
		src.WriteString("\nredis.register_function('" + fn + fnOpen + scripts[n].body + fnClose)
	}
	return &library{name: name, src: src.String()}
}

// fcallFailed looks at the reply of cmd, an FCALL (command line args).
// A reply that is not about the function is returned as it is. "Function
// not found" loads the library and sends the FCALL again. again reports
// that the caller must send the call as EVALSHA: the server cannot run
// functions for this client (then they are turned off for b), or it
// refused the load for the moment (over maxmemory, loading its data, busy
// with a script: the next call tries again). The load's own failure that
// is no answer of the server (the context ended, the connection broke) is
// returned as the call's.
func (b *Backend) fcallFailed(ctx context.Context, args []any, cmd *redis.Cmd) (_ *redis.Cmd, again bool) {
	switch functionError(cmd.Err()) {
	case fnOK:
		return cmd, false
	case fnUnsupported:
		b.functionsOff("the server does not run FCALL for this client")
		return cmd, true
	}
	if err := b.loadLibrary(ctx); err != nil {
		var rerr redis.Error
		switch {
		case !errors.As(err, &rerr):
			// Not an answer of the server: the call's failure.
			failed := redis.NewCmd(ctx)
			failed.SetErr(err)
			return failed, false
		case strings.HasPrefix(err.Error(), "ERR ") || strings.HasPrefix(err.Error(), "NOPERM"):
			// No FUNCTION command, not for this user, or a library
			// this server will not take.
			b.functionsOff("FUNCTION LOAD failed: " + redisErrorCode(err))
		}
		return cmd, true
	}
	cmd = b.send(ctx, args)
	if functionError(cmd.Err()) == fnOK {
		return cmd, false
	}
	// Loaded, and still not found: the FCALL went to another server than
	// the load (a client that spreads calls over servers it does not
	// name, or a cluster node added since the load).
	b.functionsOff("the library is not found where it was loaded")
	return cmd, true
}

// loadLibrary loads functionLib where b's calls go: on every master of a
// cluster client (a slot can move to another node, and a call can be
// asked to one that is importing its slot), else on the client's server.
// A library there already counts as loaded ("ERR Library '…' already
// exists": another caller loaded it).
func (b *Backend) loadLibrary(ctx context.Context) error {
	exists := func(err error) bool { return redis.HasErrorPrefix(err, "Library") } // (HasErrorPrefix drops the ERR)
	cc, ok := b.client.(*redis.ClusterClient)
	if !ok {
		if err := b.send(ctx, []any{"function", "load", functionLib.src}).Err(); err != nil && !exists(err) {
			return err
		}
		return nil
	}
	var err error
	if ended := transport.Bounded(ctx, func(ctx context.Context) {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			if err := n.FunctionLoad(ctx, functionLib.src).Err(); err != nil && !exists(err) {
				return err
			}
			return nil
		})
	}); ended != nil {
		return ended
	}
	return err
}

// functionsOff turns functions off for b, for good, and says so once in
// the log (Debug: the scripts run as before, by EVALSHA).
func (b *Backend) functionsOff(why string) {
	if b.functions.Swap(false) {
		b.log.Debug("syncguard: Redis functions off; scripts go out as EVALSHA", "reason", why)
	}
}

// redisErrorCode is the first word of a Redis error (ERR, NOPERM, OOM),
// with the rest of its first sentence when it is ERR: what can be logged
// of it (a Redis error may repeat the command's arguments, lock keys).
func redisErrorCode(err error) string {
	msg := err.Error()
	if i := strings.IndexAny(msg, ",`'\"\n"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// fnResult is what a reply says of an FCALL.
type fnResult int

const (
	fnOK          fnResult = iota // the function ran (or the call failed some other way)
	fnNotFound                    // no such function: the library is not loaded
	fnUnsupported                 // no FCALL on this server, or not for this user
)

// functionError classifies the error of an FCALL.
func functionError(err error) fnResult {
	if err == nil {
		return fnOK // (before rerr, which escapes: no allocation on success)
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return fnOK
	}
	msg := rerr.Error()
	switch {
	case strings.HasPrefix(msg, "ERR Function not found"):
		return fnNotFound
	case strings.Contains(strings.ToLower(msg), "fcall"):
		// A refusal that names the command: "ERR unknown command 'fcall'"
		// (before Redis 7), "NOPERM … 'fcall' command" (ACL), a proxy's
		// "unsupported command". A function's own errors never name it.
		return fnUnsupported
	}
	return fnOK
}
