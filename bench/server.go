package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// server is the one redis-server a bench run measures against: started by
// this program on a free loopback port (never 6379), in a temp dir, with
// persistence off, and killed at the end.
type server struct {
	Addr    string
	Version string
	dir     string
	cmd     *exec.Cmd
	done    chan struct{}
}

func startServer(bin string) (*server, error) {
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("redis-server not found on PATH (set -redis-server): %w", err)
	}
	dir, err := os.MkdirTemp("", "syncguard-bench-")
	if err != nil {
		return nil, err
	}
	var lastErr error
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, done: make(chan struct{})}
		s.cmd = exec.Command(path,
			"--port", strconv.Itoa(port),
			"--bind", "127.0.0.1",
			"--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log"),
			"--daemonize", "no",
			"--save", "",
			"--appendonly", "no",
			"--maxclients", "10000",
		)
		s.cmd.SysProcAttr = &syscall.SysProcAttr{}
		setPdeathsig(s.cmd.SysProcAttr)
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		go func() { _ = s.cmd.Wait(); close(s.done) }()
		if err := s.waitReady(10 * time.Second); err != nil {
			lastErr = err
			s.kill()
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		info, err := c.Info(context.Background(), "server").Result()
		_ = c.Close()
		if err == nil {
			s.Version = infoField(info, "redis_version")
		}
		return s, nil
	}
	_ = os.RemoveAll(dir)
	return nil, fmt.Errorf("starting redis-server: %w", lastErr)
}

func (s *server) waitReady(d time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		select {
		case <-s.done:
			return errors.New("redis-server exited during start-up (port taken?)")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("redis-server did not answer PING in time")
}

func (s *server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
		}
	}
}

// Close kills the server and removes its directory.
func (s *server) Close() {
	s.kill()
	_ = os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port != 6379 {
			return port, nil
		}
	}
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// counter is a go-redis hook counting client round trips: one per command
// sent on its own, one per pipeline.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// newClient returns a client with the settings every library gets, and
// its round-trip counter.
func (s *server) newClient(poolSize int) (*redis.Client, *counter) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: poolSize})
	n := &counter{}
	c.AddHook(n)
	return c, n
}

// commandCalls sums INFO commandstats calls, leaving out the commands the
// harness itself or connection set-up sends (info, hello, client, ping,
// flushall). Commands run inside Lua scripts are counted by Redis too.
func commandCalls(ctx context.Context, c *redis.Client) (int64, error) {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		switch strings.SplitN(strings.TrimPrefix(name, "cmdstat_"), "|", 2)[0] {
		case "info", "hello", "client", "ping", "flushall", "config":
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
		}
	}
	return total, nil
}
