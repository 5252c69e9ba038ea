package harness

import (
	"math"
	"slices"
)

// Median returns the median of v, or NaN when v is empty.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Spread is half the range of v as a fraction of its median: the ±x % the
// reports print beside a median. It is 0 for fewer than two values.
func Spread(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	lo, hi := slices.Min(v), slices.Max(v)
	return (hi - lo) / 2 / Median(v)
}
