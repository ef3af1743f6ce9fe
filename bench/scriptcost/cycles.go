package main

import (
	"fmt"
)

// runCycles measures the cycles of the selected cases: with callgrind,
// instructions per cycle (and per acquire and per release); without,
// Redis's script time per cycle over interleaved rounds.
func runCycles(c config) error {
	s, err := start(c)
	if err != nil {
		return err
	}
	defer s.close()
	cases := selected(c)
	for _, cc := range cases {
		if err := cc.setup(s.rdb); err != nil {
			return fmt.Errorf("%s: %w", cc.name, err)
		}
	}
	if c.callgrind {
		return countCycles(c, s, cases)
	}
	return timeCycles(c, s, cases)
}

// cycles runs n cycles of cc on keys from base.
func cycles(cc costCase, base, n int) error {
	for i := base; i < base+n; i++ {
		id, err := cc.acquire(i)
		if err != nil {
			return err
		}
		if err := cc.release(i, id); err != nil {
			return err
		}
	}
	return nil
}

// countCycles reports the instructions in script commands per cycle, per
// acquire and per release, each case after 200 cycles of warm-up.
func countCycles(c config, s *server, cases []costCase) error {
	fmt.Printf("instructions in script commands (callgrind), %d cycles each, new key per cycle\n", c.n)
	for i, cc := range cases {
		base := 1e8 * (i + 1)
		if err := cycles(cc, base, 200); err != nil {
			return err
		}
		if _, err := s.dump("warmup"); err != nil {
			return err
		}
		s0, err := readSnapshot(s.rdb)
		if err != nil {
			return err
		}
		if err := cycles(cc, base+1e7, c.n); err != nil {
			return err
		}
		cy, err := s.dump(cc.name + "-cycle")
		if err != nil {
			return err
		}
		s1, err := readSnapshot(s.rdb)
		if err != nil {
			return err
		}
		acq, rel, err := apart(cc, s, base+2e7, c.n)
		if err != nil {
			return err
		}
		fmt.Printf("%-10s per cycle %8.0f (acquire %8.0f, release %8.0f)\n",
			cc.name, float64(cy)/float64(c.n), float64(acq)/float64(c.n), float64(rel)/float64(c.n))
		if c.inner {
			fmt.Printf("%-10s   %s\n", "", diff(s0, s1, c.n).inner())
		}
	}
	return nil
}

// apart runs n acquisitions, then their n releases, and returns the
// instructions of each.
func apart(cc costCase, s *server, base, n int) (acq, rel int64, err error) {
	ids := make([]string, n)
	for j := range n {
		if ids[j], err = cc.acquire(base + j); err != nil {
			return 0, 0, err
		}
	}
	if acq, err = s.dump(cc.name + "-acquire"); err != nil {
		return 0, 0, err
	}
	for j := range n {
		if err := cc.release(base+j, ids[j]); err != nil {
			return 0, 0, err
		}
	}
	rel, err = s.dump(cc.name + "-release")
	return acq, rel, err
}

// timeCycles reports Redis's script time per cycle (INFO commandstats),
// the cases interleaved in rounds on the one server, with the median of
// each case's ratio to specmin's cycle in the same round.
func timeCycles(c config, s *server, cases []costCase) error {
	for i, cc := range cases {
		if err := cycles(cc, 1e8*(i+1), 2000); err != nil { // warm-up
			return err
		}
	}
	us := make([][]float64, len(cases))
	for r := range c.rounds {
		for i, cc := range cases {
			s0, err := readSnapshot(s.rdb)
			if err != nil {
				return err
			}
			if err := cycles(cc, 1e8*(i+1)+(r+1)*1e7, c.n); err != nil {
				return err
			}
			s1, err := readSnapshot(s.rdb)
			if err != nil {
				return err
			}
			d := diff(s0, s1, c.n)
			us[i] = append(us[i], d.scriptUs())
			if c.inner {
				fmt.Printf("round %d %-10s %s\n", r+1, cc.name, d.inner())
			}
		}
	}
	ref := -1
	for i, cc := range cases {
		if cc.name == "specmin" {
			ref = i
		}
	}
	fmt.Printf("Redis script time per cycle (INFO commandstats), medians of %d rounds of %d cycles\n", c.rounds, c.n)
	for i, cc := range cases {
		line := fmt.Sprintf("%-10s %6.2f µs", cc.name, median(us[i]))
		if ref >= 0 {
			var ratio []float64
			for r := range us[i] {
				ratio = append(ratio, us[i][r]/us[ref][r])
			}
			line += fmt.Sprintf(" (%.2fx specmin)", median(ratio))
		}
		fmt.Println(line)
	}
	return nil
}
