package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit statuses of Run.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFailure: the command failed (Redis unreachable, credentials
	// refused, not syncguard data, nothing to release, confirmation
	// refused).
	ExitFailure = 1
	// ExitUsage: the command line is wrong (unknown command or flag, a
	// missing KEY, a bad URL or prefix).
	ExitUsage = 2
	// ExitSevere: doctor found a severe finding.
	ExitSevere = 3
)

// Env is what a command reads and writes.
type Env struct {
	// Stdin answers release's confirmation prompt.
	Stdin io.Reader
	// Stdout receives the command's output.
	Stdout io.Writer
	// Stderr receives errors (one line each) and prompts.
	Stderr io.Writer
	// Interactive says that Stdin is a terminal: release asks for
	// confirmation there, and refuses without --yes elsewhere.
	Interactive bool
	// Getenv reads REDIS_URL; nil means os.Getenv.
	Getenv func(string) string

	// defaultURL replaces the package's defaultURL (tests, which must not
	// use the server on the default port); "" means defaultURL.
	defaultURL string
}

// OSEnv returns the Env of the process: os.Stdin, os.Stdout, os.Stderr,
// os.Getenv, and Interactive when stdin is a character device other than
// /dev/null (a terminal, in practice).
func OSEnv() Env {
	interactive := false
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		null, err := os.Stat(os.DevNull)
		interactive = err != nil || !os.SameFile(fi, null)
	}
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Interactive: interactive, Getenv: os.Getenv}
}

// command is one subcommand: its flags (besides the common ones), its
// usage, and what it runs.
type command struct {
	name, args, summary string // summary: one line for the command list
	detail              string // more, for syncguard help <command>
	flags               func(fs *flag.FlagSet, o *options)
	// check validates the flags and arguments before any I/O.
	check func(o *options, args []string) error
	run   func(ctx context.Context, c *session, o *options, args []string) error
}

var commands = []*command{lsCommand, showCommand, releaseCommand, watchCommand, doctorCommand}

// noArgs is the check of a command that takes no arguments.
func noArgs(name, hint string) func(*options, []string) error {
	return func(_ *options, args []string) error {
		if len(args) > 0 {
			return usageErrorf("%s takes no arguments (got %q)%s", name, args[0], hint)
		}
		return nil
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Run runs the syncguard command line args (without the program name) and
// returns the exit status: ExitOK, ExitFailure, ExitUsage or ExitSevere.
// Errors go to env.Stderr as one line, "syncguard: ...". It ends early,
// with ExitOK for watch, when ctx is done.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	err := run(ctx, args, env)
	if err == nil {
		return ExitOK
	}
	var ex *exitError
	if errors.As(err, &ex) && ex.msg == "" {
		return ex.code // the command said what it had to say
	}
	fmt.Fprintln(env.Stderr, "syncguard: "+oneLine(message(err)))
	if errors.As(err, &ex) {
		return ex.code
	}
	return ExitFailure
}

func run(ctx context.Context, args []string, env Env) error {
	inv, err := parseArgs(args)
	if err != nil {
		return err
	}
	switch {
	case inv.usage:
		usage(env.Stderr)
		return &exitError{code: ExitUsage}
	case inv.help && inv.cmd != nil:
		commandUsage(env.Stdout, inv.cmd)
		return nil
	case inv.help:
		usage(env.Stdout)
		return nil
	}
	if err := inv.cmd.check(inv.o, inv.pos); err != nil {
		return err
	}
	s, err := connect(ctx, inv.o, env)
	if err != nil {
		return err
	}
	defer s.close()
	return inv.cmd.run(ctx, s, inv.o, inv.pos)
}

// invocation is a parsed command line.
type invocation struct {
	cmd *command // nil for the general help
	o   *options
	pos []string // the command's arguments
	// help asks for the help of cmd, or the general help without cmd;
	// usage says no command was given.
	help, usage bool
}

// parseArgs parses a command line: the common flags before the command
// name, the command, then its flags (common ones included) and arguments.
func parseArgs(args []string) (*invocation, error) {
	inv := &invocation{o: newOptions()}
	global := newFlagSet("syncguard", io.Discard)
	inv.o.common(global)
	rest, err := parse(global, args, true)
	if errors.Is(err, flag.ErrHelp) {
		inv.help = true
		return inv, nil
	}
	if err != nil {
		return nil, usageErrorf("%v (see syncguard help)", err)
	}
	if len(rest) == 0 {
		inv.usage = true
		return inv, nil
	}
	name := rest[0]
	if name == "help" {
		inv.help = true
		if len(rest) > 1 {
			inv.cmd = lookup(rest[1])
		}
		return inv, nil
	}
	inv.cmd = lookup(name)
	if inv.cmd == nil {
		return nil, usageErrorf("unknown command %q (commands: ls, show, release, watch, doctor; see syncguard help)", name)
	}
	fs := newFlagSet("syncguard "+name, io.Discard)
	inv.o.common(fs)
	if inv.cmd.flags != nil {
		inv.cmd.flags(fs, inv.o)
	}
	inv.pos, err = parse(fs, rest[1:], false)
	if errors.Is(err, flag.ErrHelp) {
		inv.help = true
		return inv, nil
	}
	if err != nil {
		return nil, usageErrorf("%s: %v (see syncguard help %s)", name, err, name)
	}
	return inv, nil
}

const usageText = `syncguard: inspect and operate syncguard-go locks on Redis

Usage:
  syncguard [flags] <command> [command flags] [args]

Commands:
%s
Flags (before or after the command):
  --redis URL        Redis to use: redis://[user:password@]host:port[/db] or rediss://...;
                     repeat for a Redis Cluster (a single URL of a cluster node works too);
                     default $REDIS_URL (comma-separated for several), else redis://127.0.0.1:6379
  --prefix P         key prefix of the locks (default "syncguard", as redisbackend.Options.Prefix)
  --layout L         auto, single or cluster, as Options.Layout (default auto: as the application
                     recorded it under the prefix, else cluster on a Redis Cluster)
  --fence-stripes N  the application's Options.FenceStripes (default: as it recorded it under the
                     prefix, else 0, a counter per key); only to override the record
  --timeout D        how long to wait for each reply from Redis (default 10s); a stalled
                     server fails the command in D, naming the server and the timeout

Exit status: 0 ok, 1 failure, 2 usage error, 3 doctor found a severe finding.
Run 'syncguard help <command>' for a command's flags.
`

func usage(w io.Writer) {
	var b strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, usageText, b.String())
}

func commandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: syncguard %s %s\n\n%s\n", c.name, c.args, c.summary)
	if c.detail != "" {
		fmt.Fprintf(w, "\n%s\n", c.detail)
	}
	fs := newFlagSet(c.name, w)
	if c.flags != nil {
		var o options
		c.flags(fs, &o)
		fmt.Fprintln(w, "\nFlags:")
		fs.PrintDefaults()
	}
	fmt.Fprintln(w, "\nCommon flags: --redis URL, --prefix P, --layout L, --fence-stripes N, --timeout D (see syncguard help)")
}
