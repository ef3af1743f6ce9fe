package cli

import (
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"time"
)

// options holds every flag of every command; each command's FlagSet binds
// the common ones and its own.
type options struct {
	urls    urlList
	prefix  string
	layout  string        // "auto": the recorded layout (admin.RecordedConfigs), else by the server
	stripes optInt        // unset: the recorded FenceStripes, else 0
	timeout time.Duration // each command to Redis, the connection's check included

	json      bool          // ls, show, doctor
	match     string        // ls, watch
	force     bool          // release
	yes       bool          // release
	all       bool          // release
	slot      string        // release
	route     string        // show, release: the middleware's route of KEY
	scope     string        // show, release: the middleware's scope of KEY
	keyPrefix string        // show, release: the middleware's key prefix
	interval  time.Duration // watch
	count     int           // watch
	top       int           // watch
	samples   int           // doctor
}

// The defaults of the common flags.
const (
	defaultPrefix = "syncguard"
	defaultLayout = "auto"
)

// newOptions returns the options before any flag is parsed: the common
// flags at their defaults.
func newOptions() *options {
	return &options{prefix: defaultPrefix, layout: defaultLayout, timeout: defaultTimeout}
}

// common binds the flags every command takes. Each is bound with its
// current value as its default, so the command's FlagSet keeps what the
// global one parsed before the command name: a flag means the same before
// and after the command.
func (o *options) common(fs *flag.FlagSet) {
	fs.Var(&o.urls, "redis", "Redis URL (repeat for a cluster; default $REDIS_URL)")
	fs.StringVar(&o.prefix, "prefix", o.prefix, "key prefix (redisbackend.Options.Prefix)")
	fs.StringVar(&o.layout, "layout", o.layout, "key layout: auto (as the application recorded it), single or cluster")
	fs.Var(&o.stripes, "fence-stripes", "the application's redisbackend.Options.FenceStripes (default: as it recorded it, else 0)")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "how long to wait for each reply from Redis")
}

// optInt is an int flag that knows whether it was given.
type optInt struct {
	n   int
	set bool
}

func (o *optInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a number")
	}
	o.n, o.set = n, true
	return nil
}

// urlList is a repeatable --redis flag.
type urlList []string

func (u *urlList) String() string { return strings.Join(*u, ",") }

func (u *urlList) Set(s string) error {
	*u = append(*u, s)
	return nil
}

// newFlagSet returns a FlagSet writing to w that prints no usage on a
// parse error: Run reports the error in one line (w is io.Discard for
// parsing), and the usage on -h.
func newFlagSet(name string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {}
	return fs
}

// parse parses args with fs and returns the arguments that are not flags.
// With first, it stops at the first such argument (the command name);
// otherwise flags may come after arguments too ("show KEY --json"), and
// "--" ends the flags (for a key that begins with '-').
func parse(fs *flag.FlagSet, args []string, first bool) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 || first {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
