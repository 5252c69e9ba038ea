package testkit

import (
	"errors"
	"sync"
	"testing"

	"github.com/ziplinekv/zipline/internal/localserver"
)

// Server and Config are localserver's, so tests need only this package.
type (
	Server = localserver.Server
	Config = localserver.Config
	Kind   = localserver.Kind
)

// Server kinds.
const (
	Redis  = localserver.Redis
	Valkey = localserver.Valkey
)

// NewServer starts a server for a test and stops it when the test ends. It
// skips the test if the binary is missing, and fails it on any other error.
func NewServer(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s, err := localserver.Start(cfg)
	if errors.Is(err, localserver.ErrNoBinary) {
		tb.Skipf("skipping: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Binary returns the path of the server binary for kind.
func Binary(kind Kind) (string, error) { return localserver.Binary(kind) }

// Pause freezes s (SIGSTOP) for a test and returns the function that
// resumes it. Resume is also registered with tb.Cleanup, so a test that
// fails or returns early never leaves a stopped server behind; calling the
// returned function more than once, or after Kill, is harmless.
func Pause(tb testing.TB, s *Server) (resume func()) {
	tb.Helper()
	if err := s.Pause(); err != nil {
		tb.Fatalf("testkit: pause %s: %v", s.Addr, err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { s.Resume() }) } // fails only if the process is gone
	tb.Cleanup(resume)
	return resume
}

// Restart starts s again on the same port after Kill (or kills and restarts
// it), waits until it answers, and fails the test if it cannot.
func Restart(tb testing.TB, s *Server) {
	tb.Helper()
	if err := s.Restart(); err != nil {
		tb.Fatalf("testkit: restart %s: %v", s.Addr, err)
	}
}
