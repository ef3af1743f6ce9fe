package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// Launch starts a redis-server outside a test, the way Start does: on a free
// 127.0.0.1 port, with --save "" --appendonly no and then opts, in a data
// dir of its own, answering PING when Launch returns. bin is the
// redis-server to run ("" looks it up on PATH). Close stops it and removes
// the dir; on Linux it also dies with the calling process (Pdeathsig).
//
// It is for programs such as the bench/ module, a module of its own whose
// path lies under this module's, so Go's internal rule lets it import this
// package.
func Launch(bin string, opts ...Option) (*Server, error) {
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s := &Server{dir: dir, bin: path, cfg: cfg}
	if err := s.startFresh(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("redistest: %w", err)
	}
	return s, nil
}

// Close stops a server started by Launch and removes its data dir.
func (s *Server) Close() error {
	return errors.Join(s.stop(), os.RemoveAll(s.dir))
}
