package testkit

import (
	"errors"
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
