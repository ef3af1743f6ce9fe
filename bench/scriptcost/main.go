// Command scriptcost measures what a lock cycle costs Redis: the script
// commands of an acquire + release of a new key, from one goroutine, with
// go-redis's default options, for syncguard's Backend (a lock, and a slot
// of a limit) side by side with the spec-minimal scripts
// (bench/internal/specmin) and seed 000's own scripts, on one
// redis-server of its own.
//
//	go run ./scriptcost                      # Redis command time (INFO commandstats), interleaved rounds
//	go run ./scriptcost -callgrind -n 5000   # instructions, redis-server under valgrind's callgrind
//	go run ./scriptcost -parts -callgrind    # the parts a script is built from, one script each
//
// With -callgrind only the script commands (EVALSHA, EVAL, FCALL) are
// counted: a figure the load of the machine does not move. The figures
// and what they mean are in bench/README.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

type config struct {
	n, rounds int
	callgrind bool
	dumps     string // where callgrind writes its dumps ("" a temp dir)
	cases     []string
	inner     bool
	bin       string
	scripts   string // redisbackend's scripts/ directory, for the parts made of its files
}

func main() {
	var c config
	var cases string
	var parts bool
	flag.IntVar(&c.n, "n", 20000, "cycles (or runs of a part) per measurement")
	flag.IntVar(&c.rounds, "rounds", 3, "interleaved rounds (command time only)")
	flag.BoolVar(&c.callgrind, "callgrind", false, "run redis-server under callgrind and count instructions")
	flag.StringVar(&c.dumps, "dumps", "", "keep callgrind's dumps in this directory, for callgrind_annotate")
	flag.StringVar(&cases, "cases", "", "comma-separated cases (default all); with -parts, a substring of the parts' names")
	flag.BoolVar(&c.inner, "inner", false, "also list the commands the scripts ran")
	flag.StringVar(&c.bin, "redis-server", "redis-server", "the redis-server to run")
	flag.BoolVar(&parts, "parts", false, "measure the parts scripts are built from instead of cycles")
	flag.StringVar(&c.scripts, "scripts", "../redisbackend/scripts", "redisbackend's Lua files, for -parts")
	flag.Parse()
	if cases != "" {
		c.cases = strings.Split(cases, ",")
	}
	run := runCycles
	if parts {
		run = runParts
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "scriptcost:", err)
		os.Exit(1)
	}
}
