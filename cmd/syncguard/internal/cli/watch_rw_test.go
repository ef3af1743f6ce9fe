package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func TestRWActivity(t *testing.T) {
	rw := func(writer string, fences ...string) sample {
		h := heldLimit{key: "cfg", fences: map[lock.Fence]bool{}, rw: true, writer: lock.Fence(writer)}
		for _, f := range fences {
			h.fences[lock.Fence(f)] = true
		}
		return sample{limits: map[string]heldLimit{"p:cfg": h}}
	}
	for _, tc := range []struct {
		desc      string
		prev, cur sample
		want      rwChange
	}{
		{"nothing changed", rw("", "1", "2"), rw("", "1", "2"), rwChange{}},
		{"a reader joined", rw("", "1"), rw("", "1", "2"), rwChange{joined: 1}},
		{"a reader replaced", rw("", "1", "2"), rw("", "2", "3"), rwChange{joined: 1, left: 1}},
		{"readers gave way to a writer", rw("", "1", "2"), rw("3", "3"), rwChange{left: 2, writers: 1}},
		{"readers left", rw("", "1", "2"), sample{}, rwChange{left: 2}},
		{"a writer replaced", rw("1", "1"), rw("2", "2"), rwChange{writers: 1}},
		{"a reader seen by its index key only", rw("", "1"), func() sample { s := rw("", "1"); s.rwNew[0] = 1; return s }(),
			rwChange{joined: 1, left: 1}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			if got := rwActivity(tc.prev, tc.cur); got != tc.want {
				t.Errorf("rwActivity = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestWatchReadWrite samples a read-write lock held by two readers that
// give way to a writer while watch runs.
func TestWatchReadWrite(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	const key = "settings:tenant-7"
	r1, r2 := holdRW(t, b, key, rwlock.ModeRead), holdRW(t, b, key, rwlock.ModeRead)
	if _, err := b.Acquire(context.Background(), "invoice:42", time.Minute); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(400 * time.Millisecond) // after watch's first sample
		for _, l := range []lock.Lease{r1, r2} {
			if err := b.Release(context.Background(), l.ID); err != nil {
				t.Error(err)
			}
		}
		holdRW(t, b, key, rwlock.ModeWrite)
	}()
	r := syncguard(t, "watch", "--json", "--redis", urlOf(srv), "--prefix", p, "--interval", "300ms", "--count", "4")
	<-done
	var rows []watchRow
	for _, line := range lines(r.out) {
		var row watchRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("watch --json: status %d, stderr %q, line %q: %v", r.code, r.err, line, err)
		}
		rows = append(rows, row)
	}
	if r.code != 0 || len(rows) != 4 {
		t.Fatalf("watch --json: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
	}
	var joined, left, writers int64
	for _, row := range rows {
		joined, left, writers = joined+row.ReadersJoined, left+row.ReadersLeft, writers+row.WritersGranted
		if row.Locks != 1 || row.Limits != 0 || row.Slots != 0 || row.ReadWrite != 1 {
			t.Errorf("row %+v: want 1 lock, no limit, 1 read-write lock", row)
		}
	}
	last := rows[len(rows)-1]
	if joined != 0 || left != 2 || writers != 1 || last.Readers != 0 || last.Writers != 1 {
		t.Errorf("readers +%d -%d, writers granted %d, last row %d readers and %d writers; want +0 -2, 1, 0 and 1:\n%s",
			joined, left, writers, last.Readers, last.Writers, r.out)
	}

	r = syncguard(t, "watch", "--redis", urlOf(srv), "--prefix", p, "--interval", "100ms", "--count", "1")
	if !strings.Contains(r.out, "  read-write 1 (0 readers, 1 writer; readers +0 -0, writers granted 0)") {
		t.Errorf("watch line lacks the read-write part:\n%s", r.out)
	}
}
