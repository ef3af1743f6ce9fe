package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/examples/internal/demotest"
	"github.com/syncguard-go/syncguard/lock"
)

func TestDemo(t *testing.T) {
	t.Parallel()
	got := demotest.Run(t, 30*time.Second, run)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`instance-\d ran the \d\d:\d\d:\d\d digest \(fence \d{15}\)`),
		regexp.MustCompile(`instance-\d skipped it: (ran within the window|running elsewhere)`),
		regexp.MustCompile(`Scheduled times: \d+, each ran once, none missing`),
		regexp.MustCompile(`stopping instance-\d: it hands the term over`),
		regexp.MustCompile(`instance-\d leads \(term \d{15}\), \d+ms after the stop`),
	} {
		if !want.MatchString(got) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
}

// TestDemoFailsWithoutRunRecords: with a backend that never finds the
// record of the job's last run, the instances whose clocks are behind run
// each scheduled time again, and the demo says so.
func TestDemoFailsWithoutRunRecords(t *testing.T) {
	t.Parallel()
	ctx := demotest.Context(t, 30*time.Second)
	var out bytes.Buffer
	err := demorun.Run(ctx, &out, "", func(ctx context.Context, env *demorun.Env) error {
		defer keepTime(env)()
		runs, err := lockerPart(ctx, env, func(b lock.Backend) lock.Backend { return forgetful{b.(lock.Recorder)} })
		if err != nil {
			return err
		}
		return checkOnce(env.Out, runs)
	})
	if err == nil || !regexp.MustCompile(`\d\d:\d\d:\d\d ran [23] times`).MatchString(err.Error()) {
		t.Errorf("run without run records: %v, want a scheduled time run more than once; output:\n%s", err, &out)
	}
}

// forgetful is a lock.Recorder that never finds a record.
type forgetful struct{ lock.Recorder }

func (forgetful) Record(context.Context, string) ([]byte, bool, error) { return nil, false, nil }

// TestCheckOnceFails: a scheduled time run twice, or one missing, fails
// the Locker part.
func TestCheckOnceFails(t *testing.T) {
	base := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		desc string
		runs []jobRun
		want string
	}{
		{"twice", []jobRun{{"a", base, "000000000000001"}, {"b", base, "000000000000002"}}, "09:00:00 ran 2 times"},
		{"missing", []jobRun{{"a", base, "000000000000001"}, {"a", base.Add(2 * time.Second), "000000000000002"}}, "nothing ran from 09:00:00 to 09:00:02"},
		{"fence", []jobRun{{"a", base, "000000000000002"}, {"a", base.Add(time.Second), "000000000000001"}}, "fence is not greater"},
	} {
		var out bytes.Buffer
		if err := checkOnce(&out, tc.runs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.desc, err, tc.want)
		}
	}
}
