package cli

import (
	"flag"
	"io"
	"strings"
	"time"
)

// options holds every flag of every command; each command's FlagSet binds
// the common ones and its own.
type options struct {
	urls    urlList
	prefix  string
	layout  string
	stripes int

	json     bool          // ls, show, doctor
	match    string        // ls, watch
	force    bool          // release
	yes      bool          // release
	all      bool          // release
	slot     string        // release
	interval time.Duration // watch
	count    int           // watch
	top      int           // watch
	samples  int           // doctor
}

// common binds the flags every command takes.
func (o *options) common(fs *flag.FlagSet) {
	fs.Var(&o.urls, "redis", "Redis URL (repeat for a cluster; default $REDIS_URL)")
	fs.StringVar(&o.prefix, "prefix", "syncguard", "key prefix (redisbackend.Options.Prefix)")
	fs.StringVar(&o.layout, "layout", "auto", "key layout: auto, single or cluster")
	fs.IntVar(&o.stripes, "fence-stripes", 0, "the application's redisbackend.Options.FenceStripes")
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
