package testkit

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if any of the proxy's goroutines outlived its
// test: every proxy is closed at test end, and Close waits for them.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if stacks := proxyGoroutines(); stacks != "" {
			fmt.Fprintf(os.Stderr, "testkit: proxy goroutines leaked:\n%s", stacks)
			code = 1
		}
	}
	os.Exit(code)
}

// proxyGoroutines returns the stacks of goroutines running proxy code.
func proxyGoroutines() string {
	// Close has returned for every proxy, so none should be there; a short
	// grace period only covers goroutines that are already returning.
	var found []string
	for range 50 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		found = found[:0]
		for _, g := range strings.Split(string(buf), "\n\n") {
			// By file, not function name: inlined frames keep their file.
			if strings.Contains(g, "/internal/testkit/proxy.go:") {
				found = append(found, g)
			}
		}
		if len(found) == 0 {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	return strings.Join(found, "\n\n")
}
