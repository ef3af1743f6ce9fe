package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestBadInput checks that every bad input gives one line on stderr, that
// line saying what is wrong, nothing on stdout, and a non-zero status.
func TestBadInput(t *testing.T) {
	srv := redistest.Shared(t)
	secured := redistest.Start(t, redistest.WithPassword("right"))
	p := prefix(t)
	rdb := srv.Client(t)
	rdb.Set(context.Background(), p+":plain", "hello", time.Minute)
	rdb.HSet(context.Background(), p+":hash", "a", "1")
	t.Cleanup(func() { rdb.Del(context.Background(), p+":hash") })
	newBackend(t, rdb, redisbackend.Options{Prefix: p}) // records the configuration: no warning
	good := []string{"--redis", urlOf(srv), "--prefix", p}

	for _, tc := range []struct {
		desc string
		args []string
		code int
		want string // in the error line
	}{
		{"no command", nil, ExitUsage, ""},
		{"unknown command", []string{"frobnicate"}, ExitUsage, `unknown command "frobnicate"`},
		{"unknown flag", append([]string{"ls", "--bogus"}, good...), ExitUsage, "flag provided but not defined: -bogus"},
		{"URL scheme", []string{"ls", "--redis", "http://localhost:6379"}, ExitUsage, "invalid URL scheme"},
		{"URL that does not parse", []string{"ls", "--redis", "redis://user:s3cret@local host:6379"}, ExitUsage, "--redis: not a valid URL: invalid character"},
		{"unreachable port", []string{"ls", "--redis", "redis://127.0.0.1:1"}, ExitFailure, "cannot connect to 127.0.0.1:1: connection refused"},
		{"wrong password", []string{"ls", "--redis", "redis://:s3cret@" + secured.Addr()}, ExitFailure, "rejected the credentials"},
		{"no password", []string{"ls", "--redis", "redis://" + secured.Addr()}, ExitFailure, "requires a password"},
		{"not a cluster", []string{"ls", "--redis", urlOf(srv), "--redis", urlOf(srv)}, ExitFailure, "not in cluster mode"},
		{"bad layout", append([]string{"ls", "--layout", "ring"}, good...), ExitUsage, `--layout "ring"`},
		{"bad prefix", []string{"ls", "--redis", urlOf(srv), "--prefix", "a:id:b"}, ExitUsage, `segment "id"`},
		{"bad stripes", append([]string{"ls", "--fence-stripes", "-1"}, good...), ExitUsage, "--fence-stripes"},
		{"zero timeout", append([]string{"ls", "--timeout", "0s"}, good...), ExitUsage, "--timeout must be positive"},
		{"ls argument", append([]string{"ls", "x"}, good...), ExitUsage, "ls takes no arguments"},
		{"show without KEY", append([]string{"show"}, good...), ExitUsage, "show needs a KEY"},
		{"show two KEYs", append([]string{"show", "a", "b"}, good...), ExitUsage, "show takes one KEY"},
		{"show reserved key", append([]string{"show", "fence:x"}, good...), ExitUsage, `must not begin with "id:"`},
		{"show not a lock", append([]string{"show", "plain"}, good...), ExitFailure, p + ":plain holds a value that is not syncguard lock data"},
		{"show a hash", append([]string{"show", "hash"}, good...), ExitFailure, p + ":hash holds a hash, not syncguard lock data"},
		{"release without KEY", append([]string{"release", "--force", "--yes"}, good...), ExitUsage, "release needs a KEY"},
		{"release without --force", append([]string{"release", "k"}, good...), ExitUsage, "release needs --force"},
		{"release not a lock", append([]string{"release", "--force", "--yes", "plain"}, good...), ExitFailure, "not syncguard lock data"},
		{"watch interval", append([]string{"watch", "--interval", "0s"}, good...), ExitUsage, "--interval > 0"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			r := syncguard(t, tc.args...)
			if r.code != tc.code {
				t.Errorf("status %d, want %d (stderr %q)", r.code, tc.code, r.err)
			}
			if tc.want == "" { // the usage, on stderr
				if r.out != "" || !strings.Contains(r.err, "Usage:") {
					t.Errorf("stdout %q, stderr %q; want the usage on stderr", r.out, r.err)
				}
				return
			}
			if r.out != "" {
				t.Errorf("stdout %q, want nothing", r.out)
			}
			if !strings.HasPrefix(r.err, "syncguard: ") || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, tc.want) {
				t.Errorf("stderr %q, want one line \"syncguard: ...%s...\"", r.err, tc.want)
			}
			if strings.Contains(r.err, "s3cret") {
				t.Errorf("stderr %q shows the password", r.err)
			}
		})
	}
}

// TestRedisURLFromEnv checks that REDIS_URL is the default server, and
// that the right password in it works.
func TestRedisURLFromEnv(t *testing.T) {
	secured := redistest.Start(t, redistest.WithPassword("right"))
	env := Env{Getenv: func(k string) string {
		if k == "REDIS_URL" {
			return "redis://:right@" + secured.Addr()
		}
		return ""
	}}
	r := syncguardWith(t, env, "ls")
	if r.code != 0 || !strings.HasPrefix(r.out, lsHeader+"\n0 locks") {
		t.Errorf("ls with REDIS_URL: status %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}

// TestHelp checks that help goes to stdout with status 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "release"}, {"release", "-h"}} {
		r := syncguard(t, args...)
		if r.code != 0 || !strings.Contains(r.out, "Usage:") || r.err != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q", args, r.code, r.out, r.err)
		}
	}
}
