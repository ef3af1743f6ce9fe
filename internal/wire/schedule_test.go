package wire

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestScheduleRoundTrip: a tick record and a manifest decode to what was
// encoded; anything else is ErrBadSchedule.
func TestScheduleRoundTrip(t *testing.T) {
	tk := ScheduleTick{Fence: "000000000000042", Last: time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)}
	if got, err := DecodeScheduleTick(tk.Encode()); err != nil || got != tk {
		t.Errorf("tick: got %+v, %v; want %+v", got, err, tk)
	}
	m := &ScheduleManifest{Fence: "000000000000042", Identity: "pod \"a\"\n", Entries: []ScheduleEntry{{"a", "1"}, {"b", "2"}}}
	if got, err := DecodeScheduleManifest(m.Encode()); err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("manifest: got %+v, %v; want %+v", got, err, m)
	}
	for _, bad := range []string{"", "SGT1 000000000000042", "SGT1 42 1", "SGT1 000000000000042 01", "SGM1 000000000000042 1 \"a\"", "SGM1 000000000000042 2 \"a\"\nb 1\na 2"} {
		_, err1 := DecodeScheduleTick([]byte(bad))
		_, err2 := DecodeScheduleManifest([]byte(bad))
		if !errors.Is(err1, ErrBadSchedule) || !errors.Is(err2, ErrBadSchedule) {
			t.Errorf("%q: got %v and %v, want ErrBadSchedule", bad, err1, err2)
		}
	}
}
