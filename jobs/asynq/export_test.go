package asynqlock

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
)

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

// WrapUntraced is Wrap without the delivery's span: the handler as it was
// before deliveries were traced, to compare their allocations.
func (g *Guard) WrapUntraced(h asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		var d delivery
		err := g.process(ctx, h, t, &d)
		g.drops.add(ctx, err)
		return err
	})
}
