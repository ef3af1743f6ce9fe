package wire

import (
	"errors"
	"testing"
	"time"
)

// TestJobRunRoundTrip: a job run record decodes to what was encoded, its
// bytes are pinned, and anything else is ErrBadJobRun.
func TestJobRunRoundTrip(t *testing.T) {
	r := JobRun{Fence: "000000000000042", Fired: time.Date(2026, 12, 7, 15, 0, 2, 5_000_000, time.UTC)}
	if got, want := string(r.Encode()), "SGJ1 000000000000042 1796655602005"; got != want {
		t.Errorf("Encode: got %q, want %q", got, want)
	}
	if got, err := DecodeJobRun(r.Encode()); err != nil || got != r {
		t.Errorf("got %+v, %v; want %+v", got, err, r)
	}
	for _, bad := range []string{"", "SGJ1 000000000000042", "SGJ1 42 1", "SGJ1 000000000000042 01", "SGT1 000000000000042 1", "SGJ1 000000000000042 1 2"} {
		if _, err := DecodeJobRun([]byte(bad)); !errors.Is(err, ErrBadJobRun) {
			t.Errorf("%q: got %v, want ErrBadJobRun", bad, err)
		}
	}
}
