package testkit

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeTB records what a helper reports instead of failing the test.
type fakeTB struct {
	testing.TB
	errs []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Error(args ...any) { f.errs = append(f.errs, fmt.Sprint(args...)) }

func TestBaselineDetectsLeaks(t *testing.T) {
	base := Snapshot()
	if base.Goroutines <= 0 || base.FDs <= 0 || base.HeapBytes == 0 {
		t.Fatalf("implausible snapshot: %v", base)
	}

	// Leak a goroutine, a descriptor and 32 MiB of heap.
	block := make(chan struct{})
	done := make(chan struct{})
	go func() { leakyWait(block); close(done) }()
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	ballast := make([]byte, 32<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}

	tol := Tolerance{Goroutines: 0, FDs: 0, HeapBytes: 16 << 20}
	err = CheckBaseline(base, tol, 50*time.Millisecond)
	if err == nil {
		t.Fatal("CheckBaseline saw no leak")
	}
	for _, want := range []string{"goroutines:", "open fds:", "live heap:", "leakyWait", "/dev/null"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("report lacks %q:\n%.2000s", want, err)
		}
	}
	var tb fakeTB
	ExpectBaseline(&tb, base, tol, 10*time.Millisecond)
	if len(tb.errs) != 1 {
		t.Fatalf("ExpectBaseline reported %d errors", len(tb.errs))
	}
	// Negative tolerances skip the checks.
	if err := CheckBaseline(base, Tolerance{-1, -1, -1}, 0); err != nil {
		t.Fatalf("all checks skipped, still: %v", err)
	}
	if ballast[len(ballast)-1] != byte(len(ballast)-1) {
		t.Fatal("ballast changed")
	}

	// Released (the goroutine takes a moment to exit), back to baseline.
	ballast = nil
	f.Close()
	close(block)
	<-done
	if err := CheckBaseline(base, tol, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

//go:noinline
func leakyWait(block chan struct{}) { <-block }
