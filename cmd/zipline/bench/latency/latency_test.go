package latency

import (
	"errors"
	"testing"
	"time"
)

func TestIndexIsMonotonicAndBounded(t *testing.T) {
	prev := -1
	for ns := int64(0); ns < 1<<40; ns = ns*9/8 + 1 {
		i := index(ns)
		if i < prev || i >= buckets {
			t.Fatalf("index(%d) = %d after %d", ns, i, prev)
		}
		low, w := bounds(i)
		if i < buckets-1 && (uint64(ns) < low || uint64(ns) >= low+w) {
			t.Fatalf("%d not in bucket %d [%d,%d)", ns, i, low, low+w)
		}
		prev = i
	}
}

func TestQuantileWithinRelativeError(t *testing.T) {
	var h Histogram
	for i := 1; i <= 10000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := q * 10000 * float64(time.Microsecond)
		got := float64(h.Quantile(q))
		if got < want*0.98 || got > want*1.02 {
			t.Errorf("q%.3f = %v, want about %v", q, time.Duration(got), time.Duration(want))
		}
	}
	var o Histogram
	o.Record(time.Hour)
	h.Merge(&o)
	if h.Count() != 10001 || h.Quantile(1) < time.Minute {
		t.Fatalf("merge: count %d, max %v", h.Count(), h.Quantile(1))
	}
	h.Reset()
	if h.Count() != 0 || h.Quantile(0.5) != 0 {
		t.Fatal("reset")
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	var h Histogram
	if n := testing.AllocsPerRun(1000, func() { h.Record(1234 * time.Nanosecond) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func TestRecorder(t *testing.T) {
	var a, b Recorder
	a.Done(time.Millisecond, nil)
	a.Done(time.Second, errors.New("first"))
	b.Done(2*time.Millisecond, nil)
	b.Done(time.Second, errors.New("second"))
	b.Done(time.Second, errors.New("third"))
	a.Merge(&b)
	if a.Ops != 2 || a.Errors != 3 || a.FirstErr.Error() != "first" || a.Hist.Count() != 2 {
		t.Errorf("merged recorder: %d ops, %d errors, first %v, %d latencies", a.Ops, a.Errors, a.FirstErr, a.Hist.Count())
	}
	var c Recorder
	c.Merge(&b)
	if c.FirstErr.Error() != "second" {
		t.Errorf("first error of an empty recorder after a merge: %v", c.FirstErr)
	}
}
