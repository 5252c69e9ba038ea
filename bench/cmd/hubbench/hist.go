package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// The latency histogram: log-linear buckets as in the CLI module's
// bench/latency package (values below 128 ns exact, then 64 buckets per
// power of two, so a quantile is within 1.6 %), but with atomic counts, so
// that every connection's goroutine of a client process records into the
// same one without allocating or locking, and with counts that can be sent
// to the coordinator (latency.Histogram keeps its counts unexported).
const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	histMaxBits = 38 // up to 2^38 ns (~4.6 min); larger values land in the last bucket
	histBuckets = (histMaxBits - histSubBits) * histSub
)

// histIndex returns the bucket of a duration in nanoseconds.
func histIndex(ns int64) int {
	if ns < 0 {
		ns = 0
	}
	v := uint64(ns)
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits - 1
	return min(shift*histSub+int(v>>uint(shift)), histBuckets-1)
}

// histBounds returns the smallest value of bucket i and its width.
func histBounds(i int) (low, width uint64) {
	if i < 2*histSub {
		return uint64(i), 1
	}
	shift := i/histSub - 1
	return uint64(i-shift*histSub) << uint(shift), 1 << uint(shift)
}

// atomicHist is a histogram many goroutines record into.
type atomicHist struct{ counts [histBuckets]atomic.Uint64 }

func (h *atomicHist) record(d time.Duration) { h.counts[histIndex(int64(d))].Add(1) }

// snapshot returns the non-empty buckets as [index, count] pairs: the form
// a client process reports them in.
func (h *atomicHist) snapshot() [][2]uint64 {
	var out [][2]uint64
	for i := range h.counts {
		if c := h.counts[i].Load(); c > 0 {
			out = append(out, [2]uint64{uint64(i), c})
		}
	}
	return out
}

// hist is a plain histogram, for merging and differencing snapshots in the
// coordinator.
type hist [histBuckets]uint64

func (h *hist) add(pairs [][2]uint64, sign int) {
	for _, p := range pairs {
		if p[0] < histBuckets {
			if sign < 0 {
				h[p[0]] -= p[1]
			} else {
				h[p[0]] += p[1]
			}
		}
	}
}

func (h *hist) count() uint64 {
	var n uint64
	for _, c := range h {
		n += c
	}
	return n
}

// quantile returns the q-quantile (0 < q ≤ 1) as the middle of its bucket,
// or 0 if the histogram is empty.
func (h *hist) quantile(q float64) time.Duration {
	n := h.count()
	if n == 0 {
		return 0
	}
	rank := max(uint64(q*float64(n)+0.5), 1)
	var seen uint64
	for i, c := range h {
		seen += c
		if seen >= rank {
			low, w := histBounds(i)
			return time.Duration(low + w/2)
		}
	}
	low, w := histBounds(histBuckets - 1)
	return time.Duration(low + w/2)
}

// maximum returns the upper end of the highest non-empty bucket.
func (h *hist) maximum() time.Duration {
	for i := histBuckets - 1; i >= 0; i-- {
		if h[i] > 0 {
			low, w := histBounds(i)
			return time.Duration(low + w - 1)
		}
	}
	return 0
}
