package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// cmdStat is one line of INFO commandstats.
type cmdStat struct{ calls, usec int64 }

// snapshot is INFO commandstats by command.
type snapshot map[string]cmdStat

func readSnapshot(rdb *redis.Client) (snapshot, error) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return nil, err
	}
	s := snapshot{}
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, fields, _ := strings.Cut(rest, ":")
		var st cmdStat
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.calls = n
			case "usec":
				st.usec = n
			}
		}
		s[name] = st
	}
	return s, nil
}

// delta is what n cycles cost: the commands run between two snapshots,
// the first snapshot's INFO left out.
type delta struct {
	n    int
	cmds map[string]cmdStat
}

func diff(a, b snapshot, n int) delta {
	d := delta{n: n, cmds: map[string]cmdStat{}}
	for name, sb := range b {
		if sa := a[name]; sb.calls != sa.calls && name != "info" {
			d.cmds[name] = cmdStat{calls: sb.calls - sa.calls, usec: sb.usec - sa.usec}
		}
	}
	return d
}

// scriptNames are the commands that run a script: their time includes
// that of the commands the script runs.
var scriptNames = []string{"evalsha", "eval", "fcall", "fcall_ro"}

// scriptUs is the script time per cycle, in µs.
func (d delta) scriptUs() float64 {
	var us int64
	for _, name := range scriptNames {
		us += d.cmds[name].usec
	}
	return float64(us) / float64(d.n)
}

// inner lists the commands the scripts ran, calls and µs per cycle.
func (d delta) inner() string {
	var names []string
	for name := range d.cmds {
		if !slices.Contains(scriptNames, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, name := range names {
		st := d.cmds[name]
		fmt.Fprintf(&sb, " %s %.2f/%.2fµs", name, float64(st.calls)/float64(d.n), float64(st.usec)/float64(d.n))
	}
	return "commands per cycle (calls/µs):" + sb.String()
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
