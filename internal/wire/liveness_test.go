package wire_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
)

func TestIsLive(t *testing.T) {
	const now = int64(1_700_000_000_000)
	tests := []struct {
		desc    string
		expires int64
		want    bool
	}{
		{"expired long ago", now - 60_000, false},
		{"expired by exactly the tolerance", now - 1000, false},
		{"within the tolerance", now - 999, true},
		{"expires now", now, true},
		{"in the future", now + 30_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := wire.IsLive(tt.expires, now); got != tt.want {
				t.Errorf("IsLive(now%+d, now) = %v, want %v", tt.expires-now, got, tt.want)
			}
		})
	}
	if wire.TimeToleranceMs != 1000 {
		t.Errorf("TimeToleranceMs = %d, want 1000", wire.TimeToleranceMs)
	}
}
