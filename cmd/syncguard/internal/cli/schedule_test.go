package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestShowSchedule: show on an asynqlock Scheduler's key prints the
// manifest of its latest term: the leader and each entry's id and
// content hash, in text and JSON.
func TestShowSchedule(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()
	m := &wire.ScheduleManifest{Fence: "000000000000007", Identity: "pod-a", Entries: []wire.ScheduleEntry{
		{ID: "0a1b2c3d4e5f6071", Content: "1111222233334444"}, {ID: "daily-report", Content: "5555666677778888"}}}
	l, err := b.Acquire(ctx, wire.ScheduleManifestKey("scheduler"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l, m.Encode(), time.Hour); err != nil {
		t.Fatal(err)
	}
	r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "scheduler")
	if r.code != 0 || r.err != "" {
		t.Fatalf("show: status %d, stderr %q", r.code, r.err)
	}
	for _, want := range []string{
		"the entries of pod-a's term (fence 000000000000007)",
		"entry          0a1b2c3d4e5f6071  content 1111222233334444\n",
		"entry          daily-report  content 5555666677778888\n",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("show does not print %q:\n%s", want, r.out)
		}
	}
	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "scheduler", "--json")
	var st state
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if st.Schedule == nil || st.Schedule.Leader != "pod-a" || len(st.Schedule.Entries) != 2 || st.Schedule.Entries[1].ID != "daily-report" {
		t.Errorf("show --json: schedule %+v", st.Schedule)
	}
	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "other")
	if strings.Contains(r.out, "scheduler ") {
		t.Errorf("show on a key without a manifest prints one:\n%s", r.out)
	}
}

// TestShowScheduleEntry: show on a Scheduler entry's key decodes its
// record: the entry, the last tick and the term's fence, in text and
// JSON, not as a record this version cannot read.
func TestShowScheduleEntry(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()
	key := wire.ScheduleEntryKey("scheduler:reports", "daily-report")
	last := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	l, err := b.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rec := wire.ScheduleTick{Fence: "000000000000042", Last: last}.Encode()
	if err := b.ReleaseRecord(ctx, l, rec, time.Hour); err != nil {
		t.Fatal(err)
	}
	r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, key)
	if r.code != 0 || r.err != "" {
		t.Fatalf("show: status %d, stderr %q", r.code, r.err)
	}
	want := "scheduler entry daily-report: last tick 2026-11-28T09:00:00.000Z ("
	if !strings.Contains(r.out, want) || !strings.Contains(r.out, "by the term of fence 000000000000042\n") {
		t.Errorf("show does not print %q and the term's fence:\n%s", want, r.out)
	}
	if strings.Contains(r.out, "not a replay record") {
		t.Errorf("show prints a healthy entry record as unreadable:\n%s", r.out)
	}
	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, key, "--json")
	var st state
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if st.Tick == nil || st.Tick.Entry != "daily-report" || !st.Tick.Last.Equal(last) || st.Tick.Fence != "000000000000042" || st.Record != nil {
		t.Errorf("show --json: tick %+v, record %v", st.Tick, st.Record)
	}
}

// TestShowJobRun: show on a gocronlock Locker's job key decodes the
// record of its last run: when its instance fired it, and its fence.
func TestShowJobRun(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()
	fired := time.Date(2026, 12, 7, 15, 0, 2, 5_000_000, time.UTC)
	l, err := b.Acquire(ctx, "gocron:report", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRecord(ctx, l, wire.JobRun{Fence: l.Fence, Fired: fired}.Encode(), time.Hour); err != nil {
		t.Fatal(err)
	}
	r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "gocron:report")
	want := "a gocron job's last run: fired 2026-12-07T15:00:02.005Z ("
	if r.code != 0 || !strings.Contains(r.out, want) || !strings.Contains(r.out, "fence "+string(l.Fence)+"\n") {
		t.Errorf("show: status %d, want %q and the fence %s:\n%s%s", r.code, want, l.Fence, r.out, r.err)
	}
	r = syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "gocron:report", "--json")
	var st state
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if st.Run == nil || !st.Run.Fired.Equal(fired) || st.Run.Fence != l.Fence || st.Record != nil {
		t.Errorf("show --json: run %+v, record %v", st.Run, st.Record)
	}
}
