package main

import (
	"context"
	"testing"
)

func TestBenchCompressionFlags(t *testing.T) {
	for _, args := range [][]string{{"-goroutines", "0"}, {"-batches", "x"}, {"-classes", "json-1"}, {"-keys", "10"}} {
		err := runBenchCompression(context.Background(), args)
		if err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
