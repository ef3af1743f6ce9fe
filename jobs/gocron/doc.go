// Package gocronlock shares gocron v2's jobs among the instances of a
// service, on any lock.Backend. A Locker runs each scheduled time of a job
// once across the instances. An Elector runs the jobs on the elected
// leader only.
//
//	locker, err := gocronlock.NewLocker(backend, gocronlock.WithWindow(30*time.Second))
//	if err != nil {
//		return err
//	}
//	s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker))
//	if err != nil {
//		return err
//	}
//	_, err = s.NewJob(gocron.CronJob("*/5 * * * *", false), gocron.NewTask(func(ctx context.Context) error {
//		lease, _ := lock.LeaseFrom(locker.Held(ctx)) // this run's fence
//		return report(ctx, lease.Fence)
//	}), gocron.WithName("report"))
//
// A run holds a fenced lease on the job's name. docs/gocron.md has the
// guarantees and their limits.
package gocronlock
