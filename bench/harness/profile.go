package harness

import (
	"os"
	"runtime/pprof"
)

// StartCPUProfile starts a CPU profile written to path and returns what
// stops it and closes the file. With an empty path it profiles nothing
// and the returned stop does nothing.
func StartCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
