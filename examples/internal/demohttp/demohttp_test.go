package demohttp

import "testing"

func TestTally(t *testing.T) {
	rs := []Reply{{Status: 409}, {Status: 200}, {Status: 409}, {Status: 503}}
	if got, want := Tally(rs), "200: 1, 409: 2, 503: 1"; got != want {
		t.Errorf("Tally: got %q, want %q", got, want)
	}
}
