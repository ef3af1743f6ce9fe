package asynqlock

import "time"

// clock is a Scheduler's time: the wall clock, or, for tests, a clock
// that reads origin at the wall clock's start and runs speed times
// faster.
type clock struct {
	origin, start time.Time
	speed         float64 // 0: the wall clock
}

func (c *clock) now() time.Time {
	if c.speed == 0 {
		return time.Now()
	}
	return c.origin.Add(time.Duration(float64(time.Since(c.start)) * c.speed))
}

// wall converts a duration of the clock into one of the wall clock.
func (c *clock) wall(d time.Duration) time.Duration {
	if c.speed == 0 {
		return d
	}
	return time.Duration(float64(d) / c.speed)
}
