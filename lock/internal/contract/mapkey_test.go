package contract

import (
	"math"
	"testing"
)

type holder struct{ v any }

// TestMapKey: values whose comparison would panic, or that do not equal
// themselves, cannot key a map; others can.
func TestMapKey(t *testing.T) {
	tests := []struct {
		desc string
		v    any
		want bool
	}{
		{"pointer", new(int), true},
		{"struct of comparable fields", holder{v: 1}, true},
		{"struct holding a func", holder{v: func() {}}, false},
		{"struct holding a struct holding a slice", holder{v: holder{v: []int{1}}}, false},
		{"array holding a map", [1]any{map[int]int{}}, false},
		{"struct holding NaN", holder{v: math.NaN()}, false},
	}
	for _, tt := range tests {
		if got := MapKey(tt.v); got != tt.want {
			t.Errorf("%s: MapKey = %v, want %v", tt.desc, got, tt.want)
		}
	}
}
