package main

import (
	"context"
	"testing"
)

func TestBenchDoorDashFlags(t *testing.T) {
	for _, args := range [][]string{{"-menus", "1"}, {"-profiles", "fast"}, {"-mode", "tunnel"}, {"-goroutines", "0"}, {"-rounds", "0"}} {
		if err := runBenchDoorDash(context.Background(), args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
