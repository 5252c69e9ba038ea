package setget

import (
	"testing"
	"time"
)

func TestLongestWindow(t *testing.T) {
	for _, tc := range []struct {
		ticks []int
		want  time.Duration
		at    int
	}{
		{nil, 0, -1},
		{[]int{3, 4}, 0, -1},
		{[]int{0, 1, 0, 0, 2, 0}, 2 * Tick, 2},
		{[]int{5, 0, 0, 0}, 3 * Tick, 1},
	} {
		if got, at := LongestWindow(tc.ticks); got != tc.want || at != tc.at {
			t.Errorf("LongestWindow(%v) = %v at %d, want %v at %d", tc.ticks, got, at, tc.want, tc.at)
		}
	}
}
