package measure

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

// Kops formats a throughput in thousands of operations per second, with one
// decimal below 10k, or "–" for NaN.
func Kops(opsPerSec float64) string {
	k := opsPerSec / 1000
	switch {
	case math.IsNaN(k):
		return "–"
	case k < 10:
		return fmt.Sprintf("%.1f", k)
	default:
		return fmt.Sprintf("%.0f", k)
	}
}

// SizeLabel formats a value size: "64 B", "2 KiB".
func SizeLabel(size int) string {
	if size >= 1024 && size%1024 == 0 {
		return fmt.Sprintf("%d KiB", size/1024)
	}
	return fmt.Sprintf("%d B", size)
}
