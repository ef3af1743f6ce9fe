package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	readyTimeout = 10 * time.Second // how long Start/Restart wait for PING to answer
	termTimeout  = 10 * time.Second // how long Stop waits after SIGTERM before SIGKILL
	killTimeout  = 5 * time.Second  // how long Stop waits after SIGKILL
	startTries   = 5                // fresh ports tried when a port is lost to a bind race
	logTailLines = 40
	reservedPort = 6379 // a Redis may already run there; never use it
)

// config is what the Options set.
type config struct {
	aof      bool
	password string
	args     []string
	pre      []string // arguments before the package's own, e.g. a sentinel config file
}

// Option configures a server launched by Start.
type Option func(*config)

// WithAOF turns on the append-only file with fsync on every write
// (--appendonly yes --appendfsync always), so data survives Restart.
func WithAOF() Option { return func(c *config) { c.aof = true } }

// WithPassword sets --requirepass pw; Client and the readiness check authenticate with it.
func WithPassword(pw string) Option { return func(c *config) { c.password = pw } }

// WithArgs appends extra redis-server arguments, e.g. WithArgs("--maxmemory", "1mb").
// They come after the package's own arguments, so they can override them.
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Server is a redis-server used by tests: either a process this package started
// (Start, or Shared without REDIS_ADDR) or the external server at REDIS_ADDR.
type Server struct {
	addr     string
	port     int
	dir      string
	bin      string
	cfg      config
	external bool // REDIS_ADDR: not ours, no process
	shared   bool // returned by Shared: must not be stopped, restarted or paused

	mu     sync.Mutex
	proc   *proc // nil when stopped (or external)
	paused bool
}

// proc is one running redis-server process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and been reaped
	err  error         // Wait's result; valid once done is closed
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// errAddrInUse reports that redis-server could not bind its port.
var errAddrInUse = errors.New("redis-server could not bind its port")

// Start launches a fresh redis-server on a free 127.0.0.1 port with its dir in t.TempDir(),
// waits until it answers PING, and stops it in t.Cleanup. It needs redis-server on PATH
// (even when REDIS_ADDR is set); without it the test is skipped, or fails when
// SYNCGUARD_REQUIRE_REDIS=1.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin := lookupServer(t, "redistest.Start needs its own redis-server process")
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	dir := t.TempDir() // registered before our cleanup, so removed after the process stops
	s := &Server{dir: dir, bin: bin, cfg: cfg}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redistest: redis-server %s log tail:\n%s", s.addr, s.logTail())
		}
		if err := s.stop(); err != nil {
			t.Errorf("redistest: cleanup: %v", err)
		}
	})
	if err := s.startFresh(); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return s
}

// startFresh starts the process on a newly picked free port, retrying on bind races.
func (s *Server) startFresh() error {
	var err error
	for i := 0; i < startTries; i++ {
		var port int
		if port, err = freePort(); err != nil {
			return err
		}
		s.port = port
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err = s.launch(); !errors.Is(err, errAddrInUse) {
			return err
		}
	}
	return fmt.Errorf("gave up after %d ports: %w", startTries, err)
}

// freePort asks the kernel for a free loopback port (never 6379).
func freePort() (int, error) {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("picking a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port != reservedPort {
			return port, nil
		}
	}
}

func (s *Server) logPath() string    { return filepath.Join(s.dir, "redis.log") }
func (s *Server) stdoutPath() string { return filepath.Join(s.dir, "redis.stdout") }

// launch starts redis-server on s.port and waits until it answers PING. On failure the
// process is killed; errAddrInUse is wrapped if it could not bind.
func (s *Server) launch() error {
	args := append(append([]string(nil), s.cfg.pre...),
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--logfile", s.logPath(),
		"--daemonize", "no",
		"--save", "",
	)
	if s.cfg.aof {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if s.cfg.password != "" {
		args = append(args, "--requirepass", s.cfg.password)
	}
	args = append(args, s.cfg.args...)

	// Startup errors (bad arguments) go to stdout/stderr before the log file is opened.
	out, err := os.OpenFile(s.stdoutPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	// Only log lines written from here on tell why this run failed (Restart reuses the log).
	var logStart int64
	if fi, err := os.Stat(s.logPath()); err == nil {
		logStart = fi.Size()
	}

	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()

	if err := waitReady(p, s.addr, s.cfg.password, readyTimeout); err != nil {
		_ = killProc(p)
		tail := s.logTail()
		if fresh := readFrom(s.logPath(), logStart); strings.Contains(fresh, "Address already in use") ||
			strings.Contains(fresh, "Could not create server TCP listening socket") {
			return fmt.Errorf("%w: %s", errAddrInUse, s.addr)
		}
		return fmt.Errorf("redis-server on %s (dir %s) not ready: %v\nlog tail:\n%s", s.addr, s.dir, err, tail)
	}
	s.mu.Lock()
	s.proc, s.paused = p, false
	s.mu.Unlock()
	return nil
}

// waitReady polls with AUTH+PING until the server answers PONG, it exits, or timeout.
func waitReady(p *proc, addr, password string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("redis-server exited: %v", p.err)
		}
		if last = ping(addr, password, p.cmd.Process.Pid); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG after %v: %v", timeout, last)
		}
		select {
		case <-p.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ping speaks raw RESP so that readiness checks do not depend on client
// behaviour. It also asks the server its process id, which must be pid: a
// port picked free can be taken by another process (another test's server)
// before ours binds it, and then the answer to the PING is not ours. (A
// server whose INFO is renamed away is taken at its PONG.)
func ping(addr, password string, pid int) error {
	conn, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	var req []byte
	if password != "" {
		req = append(req, respCommand("AUTH", password)...)
	}
	req = append(req, respCommand("PING")...)
	if _, err := conn.Write(req); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	if password != "" {
		if line, err := r.ReadString('\n'); err != nil {
			return err
		} else if !strings.HasPrefix(line, "+OK") {
			return fmt.Errorf("AUTH: %s", strings.TrimSpace(line))
		}
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING: %s", strings.TrimSpace(line)) // e.g. -LOADING
	}
	if _, err := conn.Write(respCommand("INFO", "server")); err != nil {
		return err
	}
	if line, err = r.ReadString('\n'); err != nil {
		return err
	}
	if strings.HasPrefix(line, "-ERR unknown command") {
		return nil // INFO renamed away (WithArgs "rename-command"): the PONG must do
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
	if !strings.HasPrefix(line, "$") || err != nil {
		return fmt.Errorf("INFO server: %s", strings.TrimSpace(line))
	}
	info := make([]byte, n+2)
	if _, err := io.ReadFull(r, info); err != nil {
		return err
	}
	if want := "process_id:" + strconv.Itoa(pid) + "\r\n"; !strings.Contains(string(info), want) {
		return fmt.Errorf("another process answers on %s (INFO server has no %q)", addr, strings.TrimSpace(want))
	}
	return nil
}

func respCommand(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// killProc SIGKILLs the process group (works on a SIGSTOPped process too) and waits.
func killProc(p *proc) error {
	if !p.exited() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(killTimeout):
		return fmt.Errorf("redis-server pid %d did not die after SIGKILL", p.cmd.Process.Pid)
	}
}

// stop terminates the process gracefully (SIGTERM, plus SIGCONT if paused), falling back
// to SIGKILL. It is a no-op when nothing runs.
func (s *Server) stop() error {
	s.mu.Lock()
	p, paused := s.proc, s.paused
	s.proc, s.paused = nil, false
	s.mu.Unlock()
	if p == nil || p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if paused {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(termTimeout):
	}
	return killProc(p)
}

// readFrom returns the file's content from offset on ("" on error).
func readFrom(path string, offset int64) string {
	data, err := os.ReadFile(path)
	if err != nil || offset > int64(len(data)) {
		return ""
	}
	return string(data[offset:])
}

// logTail returns the last lines of the server's log and stdout/stderr.
func (s *Server) logTail() string {
	if s.dir == "" {
		return "(no log: external server)"
	}
	var b strings.Builder
	for _, path := range []string{s.stdoutPath(), s.logPath()} {
		data, err := os.ReadFile(path)
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > logTailLines {
			lines = lines[len(lines)-logTailLines:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", path, strings.Join(lines, "\n"))
	}
	if b.Len() == 0 {
		return "(log empty)"
	}
	return b.String()
}

// Addr returns the server's "host:port"; it is stable across Restart.
func (s *Server) Addr() string { return s.addr }

// Client returns a new go-redis client for the server (password filled in), with opts
// applied last; it is closed in t.Cleanup.
func (s *Server) Client(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{Addr: s.addr, Password: s.cfg.password}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// forbidShared fails the test when op is called on the shared server.
func (s *Server) forbidShared(t testing.TB, op string) {
	t.Helper()
	if s.external {
		t.Fatalf("redistest: %s is not allowed on the external server at REDIS_ADDR=%s; use redistest.Start for a private server", op, s.addr)
	}
	if s.shared {
		t.Fatalf("redistest: %s is not allowed on the shared server (other tests use it); use redistest.Start for a private server", op)
	}
}

// Stop terminates the server (SIGTERM, bounded wait, SIGKILL fallback; a paused server is
// continued first). Its port and dir are kept for Restart. Not allowed on Shared servers.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.forbidShared(t, "Stop")
	if err := s.stop(); err != nil {
		t.Fatalf("redistest: Stop %s: %v\nlog tail:\n%s", s.addr, err, s.logTail())
	}
}

// Kill SIGKILLs the server at once, as a crash: no shutdown, so it writes
// nothing more (with WithAOF and its fsync on every write, every write it
// answered is on disk). Its port and dir are kept for Restart. Not allowed
// on Shared servers.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.forbidShared(t, "Kill")
	if err := s.kill(); err != nil {
		t.Fatalf("redistest: Kill %s: %v\nlog tail:\n%s", s.addr, err, s.logTail())
	}
}

// Restart stops the server if it runs and starts it again on the same port and dir; with
// WithAOF the data survives. Not allowed on Shared servers.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.forbidShared(t, "Restart")
	if err := s.stop(); err != nil {
		t.Fatalf("redistest: Restart %s: stop: %v\nlog tail:\n%s", s.addr, err, s.logTail())
	}
	var err error
	for i := 0; i < startTries; i++ {
		if err = s.launch(); !errors.Is(err, errAddrInUse) {
			break
		}
		time.Sleep(100 * time.Millisecond) // someone else holds the port for now
	}
	if err != nil {
		t.Fatalf("redistest: Restart %s: %v", s.addr, err)
	}
}

// running returns the live process or fails the test.
func (s *Server) running(t testing.TB, op string) *proc {
	t.Helper()
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.exited() {
		t.Fatalf("redistest: %s: redis-server %s is not running\nlog tail:\n%s", op, s.addr, s.logTail())
	}
	return p
}

// Pause freezes the server with SIGSTOP: connections are accepted by the kernel but
// nothing is answered until Resume. Not allowed on Shared servers.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	s.forbidShared(t, "Pause")
	p := s.running(t, "Pause")
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("redistest: Pause %s: %v", s.addr, err)
	}
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
}

// Resume continues a paused server with SIGCONT. Not allowed on Shared servers.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	s.forbidShared(t, "Resume")
	p := s.running(t, "Resume")
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("redistest: Resume %s: %v", s.addr, err)
	}
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
}

// Flush runs FLUSHALL. It is allowed only on servers this package started, never on the
// external server at REDIS_ADDR.
func (s *Server) Flush(t testing.TB) {
	t.Helper()
	if s.external {
		t.Fatalf("redistest: Flush (FLUSHALL) is forbidden on the external server at REDIS_ADDR=%s; use redistest.Prefix keys instead", s.addr)
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr, Password: s.cfg.password})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatalf("redistest: FLUSHALL on %s: %v", s.addr, err)
	}
}

// kill SIGKILLs the server at once (no shutdown, no last replication to
// replicas), keeping its port and dir for Restart.
func (s *Server) kill() error {
	s.mu.Lock()
	p := s.proc
	s.proc, s.paused = nil, false
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	return killProc(p)
}
