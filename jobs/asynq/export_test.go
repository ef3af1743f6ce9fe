package asynqlock

import "time"

// SetClock makes s read a clock that shows origin at start (wall clock)
// and runs speed times faster than the wall clock.
func SetClock(s *Scheduler, origin, start time.Time, speed float64) {
	s.clock = clock{origin: origin, start: start, speed: speed}
}

// NextTick returns the first tick of cronspec after t, as a Scheduler
// computes it.
func NextTick(cronspec string, t time.Time) (time.Time, error) {
	sp, err := parseSpec(cronspec)
	if err != nil {
		return time.Time{}, err
	}
	return sp.next(t), nil
}
