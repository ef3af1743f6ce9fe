package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// distinctCols are the distinct-keys libraries after syncguard-go, in
// report order: the peers, the raw baseline and the spec-minimal floor.
var distinctCols = []string{libRedislock, libRedsync, libRueidis, libRaw, libSpecMin}

// kindsMethod describes the context kinds that ran, for the method.
func kindsMethod(kinds []ctxKind) string {
	var f []string
	for _, k := range kinds {
		f = append(f, fmt.Sprintf("**%s** (%s)", k, k.Go()))
	}
	return strings.Join(f, ", ")
}

// distinctTables writes section 1's tables: cycles/s by context kind with
// ratios, every row with Redis's cost per cycle, and syncguard-go's and
// the spec-minimal row's Redis commands by command.
func (r *results) distinctTables(b *strings.Builder) {
	c := r.cfg
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }

	// which libraries ran at all, in report order
	var ran []string
	for _, l := range libraries {
		if slices.ContainsFunc(r.distinct, func(d distinctResult) bool { return d.Lib == l.name }) {
			ran = append(ran, l.name)
		}
	}
	others := slices.DeleteFunc(slices.Clone(ran), func(s string) bool { return s == libSyncguard })

	p("Cycles/s of syncguard-go and each other row's ratio to it (peer / syncguard-go, same goroutines and context kind); Redis command µs / Redis CPU µs per cycle in the second table.")
	p("")
	r.ratioTable(b, others, "%.0f", distinctResult.Rate)
	p("")
	p("Client CPU µs per cycle (the bench process's user+sys time over the cell, by getrusage: the library's client and the harness's loop) of syncguard-go, and each other row's ratio to it:")
	p("")
	r.ratioTable(b, others, "%.1f", distinctResult.ClientUs)
	p("")
	p("Redis command µs / Redis CPU µs per cycle:")
	p("")
	p("| goroutines | context | %s |", strings.Join(ran, " | "))
	p("|---:|---|%s", strings.Repeat("---:|", len(ran)))
	for _, g := range c.conc {
		for _, k := range c.kinds {
			if _, ok := r.findK(g, k, libSyncguard); !ok {
				continue
			}
			var cells []string
			for _, lib := range ran {
				d, ok := r.findK(g, k, lib)
				if !ok {
					cells = append(cells, "–")
					continue
				}
				cells = append(cells, fmt.Sprintf("%.1f / %.1f", d.CmdUs(), d.CPUUs()))
			}
			p("| %d | %s | %s |", g, k, strings.Join(cells, " | "))
		}
	}
	p("")
	p("Every row:")
	p("")
	p("| goroutines | context | library | cycles/s | vs syncguard-go | p50 | p99 | Redis command µs / cycle | Redis CPU µs / cycle | Redis commands / cycle | errors |")
	p("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, g := range c.conc {
		for _, k := range c.kinds {
			ref, _ := r.findK(g, k, libSyncguard)
			for _, lib := range ran {
				d, ok := r.findK(g, k, lib)
				if !ok {
					continue
				}
				p("| %d | %s | %s | %.0f | %s | %s | %s | %.1f | %.1f | %.2f | %d |", g, k, lib, d.Rate(), ratio(d.Rate(), ref.Rate()),
					ms(d.P50), ms(d.P99), d.CmdUs(), d.CPUUs(), d.CmdsPer(), d.Errors)
			}
		}
	}
	p("")
	k := r.refKind()
	p("Redis commands per cycle by command (%s): calls per cycle x usec per call, largest total first. A script's usec includes its commands'; both rows send nothing but scripts, so the scripts' usec less every other command's is the time the scripts spent outside their commands (Lua: the script body, argument tables, replies).", k)
	p("")
	p("| goroutines | library | Redis command µs / cycle | of which scripts outside their commands | commands / cycle | by command |")
	p("|---:|---|---:|---:|---:|---|")
	for _, g := range c.conc {
		for _, lib := range []string{libSyncguard, libSpecMin} {
			d, ok := r.findK(g, k, lib)
			if !ok {
				continue
			}
			p("| %d | %s | %.1f | %.1f | %.2f | %s |", g, lib, d.CmdUs(), d.LuaUs(), d.CmdsPer(), byCommand(d))
		}
	}
	p("")
}

// scriptCommand reports whether a command (commandstats name) runs a script.
func scriptCommand(name string) bool {
	switch name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// LuaUs is the scripts' usec per cycle less every other command's: the time
// scripts spent outside the commands they ran, for a row whose only
// top-level commands are scripts.
func (r distinctResult) LuaUs() float64 {
	var scripts, other int64
	for n, s := range r.Redis.ByCmd {
		if scriptCommand(n) {
			scripts += s.Usec
		} else {
			other += s.Usec
		}
	}
	return perCycle(float64(scripts-other), r.Cycles)
}

// byCommand is d's commands per cycle, largest total usec first.
func byCommand(d distinctResult) string {
	type kv struct {
		name string
		s    cmdStat
	}
	var all []kv
	for n, s := range d.Redis.ByCmd {
		if s.Calls > 0 {
			all = append(all, kv{n, s})
		}
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.s.Usec != b.s.Usec {
			return int(b.s.Usec - a.s.Usec)
		}
		return strings.Compare(a.name, b.name)
	})
	var f []string
	for _, x := range all {
		f = append(f, fmt.Sprintf("%s %.2f x %.2f µs", strings.ToUpper(x.name), perCycle(float64(x.s.Calls), d.Cycles), float64(x.s.Usec)/float64(x.s.Calls)))
	}
	if len(f) == 0 {
		return "–"
	}
	return strings.Join(f, ", ")
}

// goals25 checks the goals of issue 25 that this run measures.
func (r *results) goals25(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	p("## Goals of issue 25 (computed from this run)")
	p("")
	if len(r.distinct) > 0 {
		k := r.refKind()
		for _, g := range []int{1, 32} {
			sg, ok1 := r.findK(g, k, libSyncguard)
			sm, ok2 := r.findK(g, k, libSpecMin)
			if !ok1 || !ok2 || sm.CmdUs() == 0 {
				continue
			}
			q := sg.CmdUs() / sm.CmdUs()
			ok := sg.CmdUs() <= 10 && q <= 0.8
			p("- [%s] Redis command time per acquire + release at most 10 µs and at most 0.8x the spec-minimal row's (%d goroutine%s, %s): %s (%.1f µs, %.2fx %.1f µs).",
				x(ok), g, plural(g), k, mark(ok), sg.CmdUs(), q, sm.CmdUs())
		}
		sg, ok1 := r.findK(32, k, libSyncguard)
		ru, ok2 := r.findK(32, k, libRueidis)
		if ok1 && ok2 && ru.CPUUs() > 0 {
			ok := sg.CPUUs() <= ru.CPUUs()
			p("- [%s] Redis CPU per cycle at 32 goroutines no more than rueidislock's (%s): %s (%.1f µs vs %.1f µs, %.2fx).",
				x(ok), k, mark(ok), sg.CPUUs(), ru.CPUUs(), sg.CPUUs()/ru.CPUUs())
		}
		for _, kind := range r.cfg.kinds {
			var miss []string
			checked := 0
			for _, g := range r.cfg.conc {
				want := 1.0
				if g >= 32 {
					want = 1.2
				}
				sg, ok := r.findK(g, kind, libSyncguard)
				if !ok {
					continue
				}
				for _, lib := range peers {
					pl, ok := r.findK(g, kind, lib)
					if !ok || pl.Rate() == 0 {
						continue
					}
					checked++
					if q := sg.Rate() / pl.Rate(); q < want {
						miss = append(miss, fmt.Sprintf("%d: %.2fx %s", g, q, lib))
					}
				}
			}
			if checked == 0 {
				continue
			}
			ok := len(miss) == 0
			detail := "every pair met"
			if !ok {
				detail = "short at " + strings.Join(miss, "; ")
			}
			p("- [%s] Distinct keys, %s: at least 1.0x every peer at 1, 4 and 8 goroutines and 1.2x at 32 and 128: %s (%s).", x(ok), kind, mark(ok), detail)
		}
	}
	if len(r.fleet) > 0 {
		for _, hold := range r.cfg.holds {
			sg, ok := r.fleetFind(hold, libSyncguard)
			if !ok {
				continue
			}
			best, bestLib := r.bestFleetPeer(hold)
			want := 1.0
			if hold == 0 {
				want = 0.9
			}
			q := sg.Rate() / max(best, 1e-9)
			ok = q >= want && sg.Jain >= 0.99 && sg.MaxWait <= 100*time.Millisecond && sg.Starved == 0
			p("- [%s] Hot key, %d processes x %d goroutines, hold %v: at least %.1fx the best peer, Jain >= 0.99, max wait <= 100 ms, no starved worker: %s (%.2fx %s; Jain %.3f; max wait %s; %d starved).",
				x(ok), r.cfg.fleetProcs, r.cfg.fleetG, hold, want, mark(ok), q, bestLib, sg.Jain, ms(sg.MaxWait), sg.Starved)
		}
	}
	p("")
}

// ratioTable writes a table of syncguard-go's value of each cell (in
// format) and each other library's ratio to it, by goroutines and context.
func (r *results) ratioTable(b *strings.Builder, others []string, format string, value func(distinctResult) float64) {
	fmt.Fprintf(b, "| goroutines | context | %s | %s |\n", libSyncguard, strings.Join(others, " | "))
	fmt.Fprintf(b, "|---:|---|---:|%s\n", strings.Repeat("---:|", len(others)))
	for _, g := range r.cfg.conc {
		for _, k := range r.cfg.kinds {
			ref, ok := r.findK(g, k, libSyncguard)
			if !ok {
				continue
			}
			cells := []string{fmt.Sprintf(format, value(ref))}
			for _, lib := range others {
				if d, ok := r.findK(g, k, lib); ok {
					cells = append(cells, ratio(value(d), value(ref)))
				} else {
					cells = append(cells, "–")
				}
			}
			fmt.Fprintf(b, "| %d | %s | %s |\n", g, k, strings.Join(cells, " | "))
		}
	}
}
