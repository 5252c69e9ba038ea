package compression

import (
	"flag"
	"io"
	"testing"
)

// Bad flag values are refused before anything starts.
func TestRegisterFlagsRefusesBadValues(t *testing.T) {
	for _, args := range [][]string{{"-goroutines", "0"}, {"-batches", "x"}, {"-classes", "json-1"}, {"-keys", "10"}} {
		fs := flag.NewFlagSet("compression", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		suite := RegisterFlags(fs)
		err := fs.Parse(args)
		if err == nil {
			_, err = suite()
		}
		if err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
