package lock

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

func TestRetryDefaults(t *testing.T) {
	tests := []struct {
		desc string
		r    Retry
		want Retry
	}{
		{"zero", Retry{}, Retry{MaxRetries: contract.DefaultMaxRetries, BaseDelay: contract.DefaultBaseDelay}},
		{"set fields kept", Retry{MaxRetries: 3, BaseDelay: time.Second, MaxDelay: time.Minute, Fixed: true, NoJitter: true},
			Retry{MaxRetries: 3, BaseDelay: time.Second, MaxDelay: time.Minute, Fixed: true, NoJitter: true}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := tt.r.withDefaults(); got != tt.want {
				t.Errorf("withDefaults = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRetryDelay: the schedule without jitter, attempt by attempt.
func TestRetryDelay(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		desc string
		r    Retry
		want []time.Duration // after attempts 0, 1, ...
	}{
		{"default: exponential from 100ms", Retry{NoJitter: true}, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms}},
		{"exponential", Retry{BaseDelay: 10 * ms, NoJitter: true}, []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms}},
		{"exponential capped", Retry{BaseDelay: 10 * ms, MaxDelay: 50 * ms, NoJitter: true}, []time.Duration{10 * ms, 20 * ms, 40 * ms, 50 * ms, 50 * ms}},
		{"fixed", Retry{BaseDelay: 10 * ms, Fixed: true, NoJitter: true}, []time.Duration{10 * ms, 10 * ms, 10 * ms}},
		{"fixed capped", Retry{BaseDelay: 10 * ms, MaxDelay: 5 * ms, Fixed: true, NoJitter: true}, []time.Duration{5 * ms, 5 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			r := tt.r.withDefaults()
			for i, want := range tt.want {
				if got := r.delay(i); got != want {
					t.Errorf("delay(%d) = %v, want %v", i, got, want)
				}
			}
		})
	}
	// Doubling stops once a delay reaches an hour, so it never overflows.
	r := Retry{BaseDelay: ms, NoJitter: true}
	if got, want := r.delay(1_000_000), (1<<22)*ms; got != want {
		t.Errorf("delay(1e6) of 1ms doubled = %v, want %v", got, want)
	}
}

// TestRetryJitter: each jitter keeps delays in its range, and the random
// ones do vary.
func TestRetryJitter(t *testing.T) {
	const d = 100 * time.Millisecond
	tests := []struct {
		desc     string
		noJitter bool
		min      time.Duration
		belowMid bool // some delays fall under d/2
		belowMax bool // some delays fall under d
	}{
		{"equal: d/2 + rand(d/2)", false, d / 2, false, true},
		{"none: d", true, d, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			r := Retry{BaseDelay: d, Fixed: true, NoJitter: tt.noJitter}.withDefaults()
			var belowMid, belowMax bool
			for range 1000 {
				got := r.delay(0)
				if got < tt.min || got > d {
					t.Fatalf("delay = %v, want within [%v, %v]", got, tt.min, d)
				}
				belowMid = belowMid || got < d/2
				belowMax = belowMax || got < d
			}
			if belowMid != tt.belowMid || belowMax != tt.belowMax {
				t.Errorf("in 1000 delays: some under d/2 %v, some under d %v; want %v, %v",
					belowMid, belowMax, tt.belowMid, tt.belowMax)
			}
		})
	}
}

// FuzzRetry: check accepts exactly the valid schedules, and a valid
// schedule's delays are never negative nor above its cap.
func FuzzRetry(f *testing.F) {
	f.Add(0, int64(0), int64(0), false, false, 0)
	f.Add(3, int64(time.Hour), int64(time.Millisecond), true, true, 40)
	f.Add(-1, int64(-1), int64(-1), false, true, 1)
	f.Fuzz(func(t *testing.T, n int, base, maxDelay int64, fixed, noJitter bool, attempt int) {
		r := Retry{MaxRetries: n, BaseDelay: time.Duration(base), MaxDelay: time.Duration(maxDelay),
			Fixed: fixed, NoJitter: noJitter}
		valid := n >= 0 && base >= 0 && maxDelay >= 0
		err := r.check()
		if (err == nil) != valid {
			t.Fatalf("check(%+v) = %v, want valid %v", r, err, valid)
		}
		if !valid {
			if CodeOf(err) != CodeInvalidArgument {
				t.Fatalf("check(%+v) = %v, want an InvalidArgument error", r, err)
			}
			return
		}
		r = r.withDefaults()
		limit := max(r.BaseDelay, 2*time.Hour)
		if r.MaxDelay > 0 {
			limit = min(limit, r.MaxDelay)
		}
		if d := r.delay(max(attempt, 0) % 100); d < 0 || d > limit {
			t.Fatalf("%+v: delay(%d) = %v, want within [0, %v]", r, attempt, d, limit)
		}
	})
}
