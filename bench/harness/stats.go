package harness

import (
	"fmt"
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

// MedianRange formats the median of get over items, followed by
// "(min–max)" when they differ, each with format: the cell the reports of
// runs print ("1.000 s (0.900 s–1.060 s)"). The median is the middle value
// (of an even count, the upper of the two middle ones), so that it is one
// of the runs' figures. items must not be empty.
func MedianRange[T any](items []T, get func(T) float64, format string) string {
	v := make([]float64, len(items))
	for i, it := range items {
		v[i] = get(it)
	}
	slices.Sort(v)
	med := fmt.Sprintf(format, v[len(v)/2])
	if v[0] == v[len(v)-1] {
		return med
	}
	return fmt.Sprintf("%s (%s–%s)", med, fmt.Sprintf(format, v[0]), fmt.Sprintf(format, v[len(v)-1]))
}
