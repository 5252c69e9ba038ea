package doordash

import (
	"flag"
	"io"
	"testing"
)

// Bad flag values are refused before anything starts.
func TestRegisterFlagsRefusesBadValues(t *testing.T) {
	for _, args := range [][]string{{"-menus", "1"}, {"-profiles", "fast"}, {"-mode", "tunnel"}, {"-goroutines", "0"}, {"-rounds", "0"}} {
		fs := flag.NewFlagSet("doordash", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		config := RegisterFlags(fs, ZiplineVariants())
		err := fs.Parse(args)
		if err == nil {
			_, err = config()
		}
		if err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
