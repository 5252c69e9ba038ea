package failover

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
)

// Timeline is one run, every time relative to the kill.
type Timeline struct {
	Victim    string            // the primary killed
	Promotion testbed.Promotion // the cluster's side: kill to promotion, and to settled
	Bucket    time.Duration
	Buckets   []Bucket // from -Before to the end of the run

	Calls, Errors int
	Classes       []Class // errors by class, most first
	// FirstErr and LastErr bound the errors returned after the kill; both
	// are 0 when there were none.
	FirstErr, LastErr time.Duration
	// BaselineP99 is the p99 of the calls started in the Before window.
	BaselineP99 time.Duration
	// Recovered is when the client was back to normal: from then on, for
	// at least Config.Stable, no call failed, the p99 stayed within
	// Config.Degraded times BaselineP99, and calls kept starting (see
	// Config.recovered); 0 if the kill never disturbed it.
	Recovered time.Duration
	// Before, During and After are the calls before the kill, from the
	// kill until Recovered, and after Recovered.
	Before, During, After Phase
}

// Bucket is the calls started in [Start, Start+Timeline.Bucket).
type Bucket struct {
	Start    time.Duration
	Calls    int // successful
	Errors   int
	P50, P99 time.Duration // of every call, failed ones included; 0 without calls
}

// Phase is a stretch of the run.
type Phase struct {
	Length time.Duration
	Calls  int // successful
	Errors int
}

// PerSecond is the successful calls per second.
func (p Phase) PerSecond() float64 {
	if p.Length <= 0 {
		return 0
	}
	return float64(p.Calls) / p.Length.Seconds()
}

// Class is one kind of error and how many calls had it.
type Class struct {
	Name  string
	Count int
}

// Window is how long the client saw errors: from the first to the last.
func (t *Timeline) Window() time.Duration { return t.LastErr - t.FirstErr }

// timeline computes the Timeline of the calls recorded up to end (ns from
// the run's start), with the kill at kill.
func (cfg *Config) timeline(recs []recorder, kill, end time.Duration) *Timeline {
	t := &Timeline{Bucket: cfg.Bucket}
	from := kill - cfg.Before
	n := int((end - from) / cfg.Bucket) // whole buckets: a partial last one would look empty
	lats := make([][]int64, n)          // per bucket
	var base []int64                    // the Before window's
	classes := map[string]int{}
	seen := false // an error after the kill
	t.Buckets = make([]Bucket, n)
	for i := range t.Buckets {
		t.Buckets[i].Start = time.Duration(i)*cfg.Bucket - cfg.Before
	}
	for _, c := range merge(recs) {
		start := time.Duration(c.start)
		if start < from || int((start-from)/cfg.Bucket) >= n {
			continue
		}
		i := int((start - from) / cfg.Bucket)
		b, at := &t.Buckets[i], start-kill
		lats[i] = append(lats[i], c.latency)
		if at < 0 {
			base = append(base, c.latency)
		}
		t.Calls++
		if c.err == nil {
			b.Calls++
			continue
		}
		b.Errors++
		t.Errors++
		classes[Classify(c.err)]++
		// An error happens when its call returns: a call in flight at
		// the kill fails after it.
		if failed := at + time.Duration(c.latency); failed >= 0 {
			if !seen || failed < t.FirstErr {
				t.FirstErr = failed
			}
			t.LastErr = max(t.LastErr, failed)
			seen = true
		}
	}
	for i := range t.Buckets {
		if l := lats[i]; len(l) > 0 {
			slices.Sort(l)
			t.Buckets[i].P50, t.Buckets[i].P99 = time.Duration(quantile(l, 0.5)), time.Duration(quantile(l, 0.99))
		}
	}
	for name, n := range classes {
		t.Classes = append(t.Classes, Class{name, n})
	}
	slices.SortFunc(t.Classes, func(a, b Class) int { return cmp.Or(b.Count-a.Count, strings.Compare(a.Name, b.Name)) })
	if len(base) > 0 {
		slices.Sort(base)
		t.BaselineP99 = time.Duration(quantile(base, 0.99))
	}
	t.Recovered = cfg.recovered(t.Buckets, time.Duration(cfg.Degraded*float64(t.BaselineP99)))
	for _, b := range t.Buckets {
		p := &t.After
		switch {
		case b.Start < 0:
			p = &t.Before
		case b.Start < t.Recovered:
			p = &t.During
		}
		p.Length += cfg.Bucket
		p.Calls += b.Calls
		p.Errors += b.Errors
	}
	return t
}

// recovered returns when the client was back to normal after the kill:
// the start of the first Stable stretch of normal buckets after the first
// degraded one, a degraded bucket being one with a failed call, a p99
// above limit, or no successful call started at all (every goroutine
// stuck in a call). Without such a stretch before the end of the run, it
// is the end of the last degraded bucket; without any degraded bucket, 0.
func (cfg *Config) recovered(buckets []Bucket, limit time.Duration) time.Duration {
	need := max(1, int(cfg.Stable/cfg.Bucket))
	var last time.Duration
	hit, run := false, 0
	for _, b := range buckets {
		if b.Start < 0 {
			continue
		}
		if b.Errors > 0 || b.P99 > limit || b.Calls == 0 {
			hit, run, last = true, 0, b.Start+cfg.Bucket
			continue
		}
		if run++; hit && run == need {
			return b.Start + cfg.Bucket - time.Duration(need)*cfg.Bucket
		}
	}
	return last
}

// quantile returns the q-quantile of sorted values.
func quantile(sorted []int64, q float64) int64 {
	i := int(q * float64(len(sorted)))
	return sorted[min(i, len(sorted)-1)]
}

// Classify names the kind of a failed call, for any client: zipline's
// documented classes (ErrConnLost, ErrNotSent), a deadline, a server error
// by its prefix (CLUSTERDOWN, MOVED...), the usual network failures by
// their text, and otherwise the error's first words.
func Classify(err error) string {
	var se *zipline.ServerError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case errors.Is(err, zipline.ErrConnLost):
		return "zipline.ErrConnLost"
	case errors.Is(err, zipline.ErrNotConnected):
		return "zipline.ErrNotConnected (ErrNotSent)"
	case errors.Is(err, zipline.ErrNotSent):
		return "zipline.ErrNotSent"
	case errors.As(err, &se):
		return se.Prefix + " (server)"
	}
	msg := err.Error()
	for _, known := range []string{"connection refused", "connection reset", "broken pipe", "i/o timeout",
		"use of closed network connection", "EOF"} {
		if strings.Contains(msg, known) {
			return known
		}
	}
	if first, _, _ := strings.Cut(msg, " "); len(first) > 2 && strings.ToUpper(first) == first {
		return first + " (server)"
	}
	if len(msg) > 60 {
		msg = msg[:60] + "…"
	}
	return msg
}

// quietLogger drops the prefill client's connection events.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))
