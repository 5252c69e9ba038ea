// Package latency records latencies in a fixed-size log-linear histogram,
// in the style of HdrHistogram, for the demo and the benchmarks.
//
// Values below 128 ns are exact; above, each power of two is split into 64
// buckets, so a quantile is within 1.6 % of the true value. Recording is a
// few integer operations and never allocates, so a benchmark loop can
// record every operation; give each goroutine its own Histogram and Merge
// them at the end.
package latency

import (
	"math/bits"
	"time"
)

const (
	subBits = 6
	sub     = 1 << subBits // buckets per power of two
	maxBits = 38           // up to 2^38 ns (~4.6 min); larger values land in the last bucket
	buckets = (maxBits - subBits) * sub
)

// Histogram counts durations. The zero value is empty and ready to use. It
// is not safe for concurrent use.
type Histogram struct {
	counts [buckets]uint64
}

func index(ns int64) int {
	if ns < 0 {
		ns = 0
	}
	v := uint64(ns)
	if v < 2*sub {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	i := shift*sub + int(v>>uint(shift))
	return min(i, buckets-1)
}

// bounds returns the smallest value in bucket i and the bucket's width.
func bounds(i int) (low, width uint64) {
	if i < 2*sub {
		return uint64(i), 1
	}
	shift := i/sub - 1
	mant := uint64(i - shift*sub)
	return mant << uint(shift), 1 << uint(shift)
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) { h.counts[index(int64(d))]++ }

// Reset empties the histogram.
func (h *Histogram) Reset() { clear(h.counts[:]) }

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

// Count returns the number of recorded durations.
func (h *Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// Quantile returns the q-quantile (0 < q <= 1) as the middle of the bucket
// holding it, or 0 if the histogram is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	rank := max(uint64(q*float64(n)+0.5), 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, w := bounds(i)
			return time.Duration(low + w/2)
		}
	}
	low, w := bounds(buckets - 1)
	return time.Duration(low + w/2)
}

// Recorder is one goroutine's record of its operations: the latency of
// each success, the number of failures and the first error. A benchmark
// gives each goroutine its own (the padding keeps neighbours off each
// other's cache lines) and merges them when the goroutines are done.
type Recorder struct {
	Hist     Histogram
	Ops      int
	Errors   int
	FirstErr error
	_        [64]byte
}

// Done records an operation that took d and ended with err: its latency
// if it succeeded, a failure otherwise.
func (r *Recorder) Done(d time.Duration, err error) {
	if err != nil {
		if r.Errors == 0 {
			r.FirstErr = err
		}
		r.Errors++
		return
	}
	r.Hist.Record(d)
	r.Ops++
}

// Merge adds o's record to r; r keeps its first error if it has one.
func (r *Recorder) Merge(o *Recorder) {
	r.Hist.Merge(&o.Hist)
	r.Ops += o.Ops
	if r.FirstErr == nil {
		r.FirstErr = o.FirstErr
	}
	r.Errors += o.Errors
}
