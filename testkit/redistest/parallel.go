package redistest

import (
	"flag"
	"strconv"
)

// DefaultParallel makes n the default of -test.parallel, unless the command
// line sets it. Tests that mostly wait on their redis-servers can run more
// at a time than the machine has cores. Call it from TestMain before Main.
func DefaultParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
