package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// commandLines are a command line of every command, its own flags and
// arguments included, without the common flags, and its arguments.
var commandLines = []struct{ line, pos []string }{
	{[]string{"ls", "--json"}, nil},
	{[]string{"show", "--json", "order:1"}, []string{"order:1"}},
	{[]string{"release", "--force", "--yes", "order:1"}, []string{"order:1"}},
	{[]string{"watch", "--count", "1"}, nil},
	{[]string{"doctor", "--samples", "1"}, nil},
}

// commonFlags are every common flag with a value other than its default.
var commonFlags = []struct {
	name, value string
	got         func(o *options) string
}{
	{"--prefix", "tenant7", func(o *options) string { return o.prefix }},
	{"--layout", "cluster", func(o *options) string { return o.layout }},
	{"--fence-stripes", "64", func(o *options) string { return o.stripes.String() }},
	{"--redis", "redis://127.0.0.1:1", func(o *options) string { return o.urls.String() }},
	{"--timeout", "2s", func(o *options) string { return o.timeout.String() }},
}

// TestCommonFlagsEitherSide parses every command with each common flag
// before the command name, after it, and two flags split across both
// sides: the options are the same every way.
func TestCommonFlagsEitherSide(t *testing.T) {
	for _, c := range commandLines {
		name, rest := c.line[0], c.line[1:]
		for _, f := range commonFlags {
			for _, where := range []string{"before", "after", "last"} {
				var args []string
				switch where {
				case "before":
					args = append([]string{f.name, f.value, name}, rest...)
				case "after":
					args = append([]string{name, f.name, f.value}, rest...)
				case "last": // after the command's arguments
					args = append(append([]string{name}, rest...), f.name, f.value)
				}
				inv, err := parseArgs(args)
				if err != nil {
					t.Fatalf("%q: %v", args, err)
				}
				if inv.cmd == nil || inv.cmd.name != name || inv.help || inv.usage {
					t.Fatalf("%q: parsed as %+v", args, inv)
				}
				if got := f.got(inv.o); got != f.value {
					t.Errorf("%q: %s is %q, want %q", args, f.name, got, f.value)
				}
				// The other flags keep their defaults.
				want := newOptions()
				for _, g := range commonFlags {
					if g.name != f.name && g.got(inv.o) != g.got(want) {
						t.Errorf("%q: %s is %q, want its default %q", args, g.name, g.got(inv.o), g.got(want))
					}
				}
				if !slices.Equal(inv.pos, c.pos) {
					t.Errorf("%q: arguments %q, want %q", args, inv.pos, c.pos)
				}
			}
			// Split: this flag before the command, every other one after.
			args := []string{f.name, f.value, name}
			for _, g := range commonFlags {
				if g.name != f.name {
					args = append(args, g.name, g.value)
				}
			}
			args = append(args, rest...)
			inv, err := parseArgs(args)
			if err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			for _, g := range commonFlags {
				if got := g.got(inv.o); got != g.value {
					t.Errorf("%q: %s is %q, want %q", args, g.name, got, g.value)
				}
			}
		}
	}
}

// TestPrefixBeforeCommand runs ls, show and release --force with --prefix
// and --layout before the command name on a lock held under a prefix of
// its own, in the cluster layout, on a server whose configuration record
// is gone: each finds the lock, as it does with the flags after the name.
func TestPrefixBeforeCommand(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p, Layout: redisbackend.LayoutCluster})
	ctx := context.Background()
	key, err := redisbackend.ConfigKey(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	url := urlOf(srv)
	for _, args := range [][]string{
		{"--prefix", p, "--layout", "cluster", "--redis", url, "ls"},
		{"ls", "--prefix", p, "--layout", "cluster", "--redis", url},
		{"--prefix", p, "ls", "--layout", "cluster", "--redis", url},
		{"--layout", "cluster", "--redis", url, "ls", "--prefix", p},
	} {
		if _, err := b.Acquire(ctx, "order:1", time.Minute); err != nil {
			t.Fatal(err)
		}
		r := syncguard(t, args...)
		if r.code != 0 || !strings.Contains(r.out, "order:1") || !strings.Contains(r.out, "1 lock") {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want the lock order:1", args, r.code, r.out, r.err)
		}
		show := append(slices.Clone(args), "order:1")
		show[slices.Index(show, "ls")] = "show"
		r = syncguard(t, show...)
		if r.code != 0 || !strings.Contains(r.out, "order:1") {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want the lock order:1", show, r.code, r.out, r.err)
		}
		release := append(slices.Clone(args), "--force", "--yes", "order:1")
		release[slices.Index(release, "ls")] = "release"
		r = syncguard(t, release...)
		if r.code != 0 {
			t.Errorf("%q: status %d, stdout %q, stderr %q", release, r.code, r.out, r.err)
		}
		if locked, err := b.IsLocked(ctx, "order:1"); err != nil || locked {
			t.Fatalf("%q: after it, IsLocked = %v, %v", release, locked, err)
		}
	}
}
