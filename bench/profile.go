package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
)

// cellProfile starts a CPU profile of one distinct-keys cell when
// -cpuprofile is set, and returns what stops it. The profile covers the
// whole bench process (the library's client and the harness's loop);
// pprof merges a library's files: go tool pprof -top bench <prefix>.<library>.*.
func (e *env) cellProfile(lib string, g int, kind ctxKind, round int) (stop func()) {
	if e.cfg.cpuProfile == "" {
		return func() {}
	}
	path := fmt.Sprintf("%s.%s.g%d.%s.%d.pprof", e.cfg.cpuProfile, slug(lib), g, slug(kind.String()), round)
	f, err := os.Create(path)
	if err != nil {
		e.log("cpuprofile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		e.log("cpuprofile: %v", err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// slug is s in lower case with every character but a-z, 0-9 and '-' as '_'.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, strings.ToLower(s))
}
