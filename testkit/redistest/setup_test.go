//go:build unix

package redistest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The set-up step that `make test` and .ci/run share, run on a PATH of fakes:
// nothing on it is the machine's own but env, chmod and true, so no test here
// installs anything.
const setupScript = "../../.ci/redis-setup"

// fakeBin is a directory for a PATH of its own and a log its fakes append to.
type fakeBin struct {
	t        *testing.T
	dir, log string
}

func newFakeBin(t *testing.T, real ...string) *fakeBin {
	t.Helper()
	f := &fakeBin{t: t, dir: t.TempDir()}
	f.log = filepath.Join(t.TempDir(), "log")
	for _, name := range real {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("the fakes need the machine's %s: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(f.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// add writes an executable shell script name whose body is body; LOG in body
// is the log's path, BIN the directory's.
func (f *fakeBin) add(name, body string) {
	f.t.Helper()
	body = strings.NewReplacer("LOG", f.log, "BIN", f.dir).Replace(body)
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

// logged returns what the fakes logged.
func (f *fakeBin) logged() string {
	f.t.Helper()
	b, err := os.ReadFile(f.log)
	if err != nil && !os.IsNotExist(err) {
		f.t.Fatal(err)
	}
	return string(b)
}

// The fakes. The apt-get that installs puts a redis-server and a redis-cli
// beside itself, as the real packages put theirs on PATH.
const (
	fakeRedis      = `echo "Redis server v=fake"`
	fakeAptInstall = `echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >>LOG
case "$1" in install)
	printf '#!/bin/sh\necho "Redis server v=fake"\n' >BIN/redis-server
	printf '#!/bin/sh\n' >BIN/redis-cli
	chmod +x BIN/redis-server BIN/redis-cli
esac`
	fakeAptNothing = `echo "apt-get $*" >>LOG`
	fakeAptFails   = `echo "apt-get $*" >>LOG; [ "$1" = update ]`
	fakeSudo       = `echo "sudo $*" >>LOG; [ "$1" = -n ] && shift; exec "$@"`
	fakeSudoPass   = `echo "sudo $*" >>LOG; echo "sudo: a password is required" >&2; exit 1`
	fakeRoot       = `echo 0`
	fakeUser       = `echo 1000`
)

func TestSetupScript(t *testing.T) {
	const (
		missing = "make test: no redis-server and redis-cli on PATH"
		todo    = ". The tests start, stop and pause redis-server processes of their own, so a server at REDIS_ADDR is not enough; " +
			"make test-unit runs only the tests that need no Redis.\n"
		install = ". Install: sudo apt-get install redis-server redis-tools" + todo
		running = missing + "; running: apt-get update && env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server redis-tools\n"
		done    = "make test: installed Redis server v=fake\n"
		ran     = "apt-get update DEBIAN_FRONTEND=\napt-get install -y redis-server redis-tools DEBIAN_FRONTEND=noninteractive\n"
	)
	tests := []struct {
		desc     string
		fakes    map[string]string
		wantCode int
		wantErr  string // BIN is the fakes' directory
		wantLog  string
	}{{
		desc:  "both on PATH: nothing to do",
		fakes: map[string]string{"redis-server": fakeRedis, "redis-cli": "", "apt-get": fakeAptInstall, "id": fakeRoot},
	}, {
		desc:     "no apt-get: stop at once",
		fakes:    map[string]string{"id": fakeRoot},
		wantCode: 1,
		wantErr:  missing + install,
	}, {
		desc:     "only redis-cli missing",
		fakes:    map[string]string{"redis-server": fakeRedis, "id": fakeRoot},
		wantCode: 1,
		wantErr:  "make test: no redis-cli on PATH" + install,
	}, {
		desc:     "brew and no apt-get",
		fakes:    map[string]string{"brew": "exit 1", "id": fakeUser},
		wantCode: 1,
		wantErr:  missing + ". Install: brew install redis" + todo,
	}, {
		desc:    "root with apt-get: install",
		fakes:   map[string]string{"apt-get": fakeAptInstall, "id": fakeRoot},
		wantErr: running + done,
		wantLog: ran,
	}, {
		desc:  "a user whose sudo needs no password: install through sudo -n",
		fakes: map[string]string{"apt-get": fakeAptInstall, "sudo": fakeSudo, "id": fakeUser},
		wantErr: missing + "; running: sudo -n apt-get update && " +
			"sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server redis-tools\n" + done,
		wantLog: "sudo -n true\nsudo -n apt-get update\napt-get update DEBIAN_FRONTEND=\n" +
			"sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server redis-tools\n" +
			"apt-get install -y redis-server redis-tools DEBIAN_FRONTEND=noninteractive\n",
	}, {
		desc:     "a user whose sudo asks for a password: stop, nothing run",
		fakes:    map[string]string{"apt-get": fakeAptInstall, "sudo": fakeSudoPass, "id": fakeUser},
		wantCode: 1,
		wantErr:  missing + " (installing with apt-get needs root, and sudo asks for a password)" + install,
		wantLog:  "sudo -n true\n",
	}, {
		desc:     "a user without sudo: stop, nothing run",
		fakes:    map[string]string{"apt-get": fakeAptInstall, "id": fakeUser},
		wantCode: 1,
		wantErr:  missing + " (installing with apt-get needs root)" + install,
	}, {
		desc:     "apt-get install fails",
		fakes:    map[string]string{"apt-get": fakeAptFails, "id": fakeRoot},
		wantCode: 1,
		wantErr:  running + missing + " (apt-get install failed)" + install,
		wantLog:  "apt-get update\napt-get install -y redis-server redis-tools\n",
	}, {
		desc:     "apt-get puts nothing on PATH",
		fakes:    map[string]string{"apt-get": fakeAptNothing, "id": fakeRoot},
		wantCode: 1,
		wantErr: running + "make test: no redis-server or redis-cli on PATH after apt-get install redis-server redis-tools (PATH=BIN)" +
			install,
		wantLog: "apt-get update\napt-get install -y redis-server redis-tools\n",
	}}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			bin := newFakeBin(t, "env", "chmod", "true")
			for name, body := range tt.fakes {
				bin.add(name, body)
			}
			cmd := exec.Command("/bin/sh", setupScript, "make test")
			cmd.Env = []string{"PATH=" + bin.dir}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != tt.wantCode {
				t.Errorf("exit status: got %d (%v), want %d", code, err, tt.wantCode)
			}
			if got, want := stderr.String(), strings.ReplaceAll(tt.wantErr, "BIN", bin.dir); got != want {
				t.Errorf("stderr:\ngot  %q\nwant %q", got, want)
			}
			if got := bin.logged(); got != tt.wantLog {
				t.Errorf("the fakes ran:\n%s\nwant:\n%s", got, tt.wantLog)
			}
		})
	}
}

// TestMakeTestStopsWithoutRedis runs `make test` on a PATH without Redis and
// without apt-get: it must stop at its set-up step, naming redis-server,
// before go or gofmt run.
func TestMakeTestStopsWithoutRedis(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH: the Makefile cannot run")
	}
	bin := newFakeBin(t, "make", "sh")
	bin.add("go", `echo "go $*" >>LOG`)
	bin.add("gofmt", `echo "gofmt $*" >>LOG`)
	bin.add("find", `echo "find $*" >>LOG`)
	cmd := exec.Command("make", "--no-print-directory", "-C", "../..", "test")
	cmd.Env = []string{"PATH=" + bin.dir, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Errorf("make test: got exit status 0, want a failure; output:\n%s", out)
	}
	if want := "make test: no redis-server and redis-cli on PATH. Install: sudo apt-get install redis-server redis-tools."; !strings.Contains(string(out), want) {
		t.Errorf("make test: output lacks %q; got:\n%s", want, out)
	}
	if got := bin.logged(); got != "" {
		t.Errorf("make test ran, before stopping:\n%s\nwant nothing", got)
	}
}
