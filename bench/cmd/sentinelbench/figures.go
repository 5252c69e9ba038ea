package main

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/failover"
)

// write is one SET of the load: when it started and when its result came,
// both from the run's start, and its error; lost is set by the read-back
// for acknowledged writes whose key the final primary does not hold.
type write struct {
	start, end time.Duration
	err        error
	lost       bool
}

// Kinds of failed calls, as the report's columns split them.
const (
	kindTimeout  = "timeout"
	kindConn     = "connection"
	kindReadOnly = "READONLY"
	kindOther    = "other"
)

var kinds = []string{kindTimeout, kindConn, kindReadOnly, kindOther}

// kindOf sorts a failed call into one of kinds: its deadline passed (the
// context's, or a socket timeout), its connection was lost, refused or
// closed (or, for zipline, it could not be sent to any primary), the server
// refused it as a replica (READONLY), or anything else.
func kindOf(err error) string {
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() || strings.Contains(msg, "i/o timeout"):
		return kindTimeout
	case strings.Contains(msg, "READONLY"):
		return kindReadOnly
	case errors.Is(err, zipline.ErrConnLost) || errors.Is(err, zipline.ErrNotConnected) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed):
		return kindConn
	}
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "use of closed network connection",
		"EOF", "closed", "no such host"} {
		if strings.Contains(msg, s) {
			return kindConn
		}
	}
	return kindOther
}

// figures are what one run measured, times relative to the fault.
type figures struct {
	Writes, Acked, Failed int
	ByKind                map[string]int // failed calls by kindOf
	Classes               map[string]int // failed calls by failover.Classify, finer
	// Window is the longest stretch without a successful write: between
	// two consecutive acknowledgements (of any goroutine), or from the last
	// one to the end of the load. WindowFrom is where it began.
	Window, WindowFrom time.Duration
	// Durable is the same, counting only the acknowledged writes the final
	// primary holds: a write acknowledged by a server about to be demoted
	// does not end it.
	Durable, DurableFrom time.Duration
	// Lost is acknowledged writes missing at the end; LostBefore those
	// acknowledged before the fault (the asynchronous replication's share),
	// LostAfter after it (the client's), and LostAfterPromotion those of
	// LostAfter acknowledged after the promotion began (-1 when its instant
	// is unknown). FirstLostAfter and LastLostAfter bound LostAfter's
	// acknowledgements.
	Lost, LostBefore, LostAfter   int
	LostAfterPromotion            int
	FirstLostAfter, LastLostAfter time.Duration
	AckedBefore, AckedAfterFault  int
}

// compute works out a run's figures from its writes. fault is the fault's
// instant and end the end of the load, both from the run's start, as the
// writes' times are; promotion is when a sentinel began to promote a
// replica, or negative when unknown.
func compute(ws []write, fault, promotion, end time.Duration) figures {
	f := figures{Writes: len(ws), ByKind: map[string]int{}, Classes: map[string]int{}, LostAfterPromotion: -1}
	if promotion >= 0 {
		f.LostAfterPromotion = 0
	}
	var acks, durable []time.Duration
	for _, w := range ws {
		if w.err != nil {
			f.Failed++
			f.ByKind[kindOf(w.err)]++
			f.Classes[failover.Classify(w.err)]++
			continue
		}
		f.Acked++
		acks = append(acks, w.end)
		before := w.end < fault
		if before {
			f.AckedBefore++
		} else {
			f.AckedAfterFault++
		}
		if !w.lost {
			durable = append(durable, w.end)
			continue
		}
		f.Lost++
		if before {
			f.LostBefore++
			continue
		}
		if t := w.end - fault; f.LostAfter == 0 || t < f.FirstLostAfter {
			f.FirstLostAfter = t
		}
		f.LastLostAfter = max(f.LastLostAfter, w.end-fault)
		f.LostAfter++
		if promotion >= 0 && w.end >= promotion {
			f.LostAfterPromotion++
		}
	}
	f.Window, f.WindowFrom = longestGap(acks, end)
	f.Durable, f.DurableFrom = longestGap(durable, end)
	f.WindowFrom -= fault
	f.DurableFrom -= fault
	return f
}

// longestGap returns the longest interval between consecutive times of ts
// (in any order), or from the last one to end, and where it began. With no
// time at all it is all of [0, end].
func longestGap(ts []time.Duration, end time.Duration) (gap, from time.Duration) {
	if len(ts) == 0 {
		return end, 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if d := s[i] - s[i-1]; d > gap {
			gap, from = d, s[i-1]
		}
	}
	if d := end - s[len(s)-1]; d > gap {
		gap, from = d, s[len(s)-1]
	}
	return gap, from
}

// bucketed counts, per bucket of width from lo (both relative to the
// fault), the writes that were acknowledged and kept, failed, and
// acknowledged but lost, by the time their result came.
func bucketed(ws []write, fault, lo, hi, width time.Duration) (kept, failed, lost []float64) {
	n := int((hi - lo + width - 1) / width)
	kept, failed, lost = make([]float64, n), make([]float64, n), make([]float64, n)
	for _, w := range ws {
		t := w.end - fault
		if t < lo || t >= hi {
			continue
		}
		i := int((t - lo) / width)
		switch {
		case w.err != nil:
			failed[i]++
		case w.lost:
			lost[i]++
		default:
			kept[i]++
		}
	}
	return kept, failed, lost
}
