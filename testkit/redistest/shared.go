package redistest

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

const (
	envAddr    = "REDIS_ADDR"
	envRequire = "SYNCGUARD_REQUIRE_REDIS"
	envNoRedis = "SYNCGUARD_NO_REDIS"
)

// The per-package shared server. A mutex rather than a sync.Once so that a call that skips
// (no redis-server) does not use up the one start; later callers wait while it starts.
var (
	sharedMu  sync.Mutex
	sharedSrv *Server
	sharedErr error
)

// RequireRedis reports whether SYNCGUARD_REQUIRE_REDIS=1, i.e. a missing Redis must fail
// tests instead of skipping them.
func RequireRedis() bool { return os.Getenv(envRequire) == "1" }

// skipIfNoRedis skips the test when SYNCGUARD_NO_REDIS=1 (make test-unit): the run
// asked for the tests that need no Redis, whatever is installed.
func skipIfNoRedis(t testing.TB) {
	t.Helper()
	if os.Getenv(envNoRedis) == "1" {
		t.Skipf("SKIP: this test needs Redis, and %s=1 runs only the tests that need none", envNoRedis)
	}
}

// lookupServer returns the path of redis-server, or skips the test (fails it when
// RequireRedis) with a loud message. why says who needs it.
func lookupServer(t testing.TB, why string) string {
	t.Helper()
	skipIfNoRedis(t)
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		return bin
	}
	const msg = "no redis-server on PATH and REDIS_ADDR unset; install redis-server or set REDIS_ADDR"
	detail := msg
	if os.Getenv(envAddr) != "" {
		detail = "no redis-server on PATH (" + why + "; REDIS_ADDR is not enough for it); install redis-server"
	}
	if RequireRedis() {
		t.Fatalf("FAIL: %s (%s=1 makes this a failure)", detail, envRequire)
	}
	t.Skipf("SKIP: %s; set %s=1 to make this a failure", detail, envRequire)
	return ""
}

// Shared returns the server shared by all tests of this test package: the external server
// at REDIS_ADDR if set, else a redis-server started on first use and kept until Main stops
// it (or, without Main, until the test binary exits; its temp dir is then leaked). Tests
// must keep their keys under Prefix(t); Stop, Restart, Pause and Resume fail the test, and
// so does Flush when the server is the external one.
func Shared(t testing.TB) *Server {
	t.Helper()
	skipIfNoRedis(t)
	sharedMu.Lock()
	defer sharedMu.Unlock() // also runs when lookupServer skips (runtime.Goexit)
	if sharedSrv != nil {
		return sharedSrv
	}
	if addr := os.Getenv(envAddr); addr != "" {
		sharedSrv = &Server{addr: addr, external: true, shared: true}
		return sharedSrv
	}
	bin := lookupServer(t, "redistest.Shared")
	if sharedErr != nil {
		t.Fatalf("redistest: shared server failed to start earlier: %v", sharedErr)
	}
	dir, err := os.MkdirTemp("", "redistest-shared-")
	if err != nil {
		sharedErr = err
		t.Fatalf("redistest: shared server: %v", err)
	}
	s := &Server{dir: dir, bin: bin, shared: true}
	if err := s.startFresh(); err != nil {
		_ = os.RemoveAll(dir)
		sharedErr = err
		t.Fatalf("redistest: shared server: %v", err)
	}
	sharedSrv = s
	return s
}

// Main runs the package's tests (m.Run), stops the shared server if one was started, removes
// its temp dir, and exits with the tests' code. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	runMainExit()
	sharedMu.Lock()
	s := sharedSrv
	sharedSrv = nil
	sharedMu.Unlock()
	if s != nil && !s.external {
		if err := s.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "redistest: stopping shared server %s: %v\n", s.addr, err)
		}
		_ = os.RemoveAll(s.dir)
	}
	os.Exit(code)
}

// Prefix returns a key prefix unique to this call, "t:<sanitized test name>:<6 random
// chars>:", so tests never collide on a shared server.
func Prefix(t testing.TB) string {
	t.Helper()
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.', r == '/':
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 64 {
		name = name[:64]
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("redistest: Prefix: %v", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "t:" + name + ":" + string(b[:]) + ":"
}

// Cleanups of shared resources other than the shared server (SharedCluster,
// SharedSentinel), run by Main after the tests, in reverse order.
var (
	mainExitMu sync.Mutex
	mainExit   []func()
)

func atMainExit(f func()) {
	mainExitMu.Lock()
	mainExit = append(mainExit, f)
	mainExitMu.Unlock()
}

func runMainExit() {
	mainExitMu.Lock()
	fs := mainExit
	mainExit = nil
	mainExitMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
