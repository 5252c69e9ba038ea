package measure

import (
	"flag"
	"math"
	"testing"
)

func TestMedianSpread(t *testing.T) {
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
	v := []float64{30, 10, 20}
	if got := Median(v); got != 20 {
		t.Errorf("Median = %v, want 20", got)
	}
	if v[0] != 30 {
		t.Error("Median sorted its argument")
	}
	if got := Median([]float64{1, 2, 3, 4}); got != 2.5 {
		t.Errorf("even Median = %v, want 2.5", got)
	}
	if got := Spread(v); got != 0.5 {
		t.Errorf("Spread = %v, want 0.5", got)
	}
	if got := Spread([]float64{7}); got != 0 {
		t.Errorf("Spread of one = %v, want 0", got)
	}
}

func TestGridFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	parse := GridFlags(fs)
	if err := fs.Parse([]string{"-conc", "8, 64", "-ops", "GET"}); err != nil {
		t.Fatal(err)
	}
	g, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	pts := g.Points()
	if len(pts) != 4 {
		t.Fatalf("%d points, want 4: %v", len(pts), pts)
	}
	if got := pts[1].String(); got != "GET 64 B c=64" {
		t.Errorf("second point %q", got)
	}
	if got := pts[3].String(); got != "GET 2 KiB c=64" {
		t.Errorf("last point %q", got)
	}

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	parse = GridFlags(fs)
	if err := fs.Parse([]string{"-ops", "del"}); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(); err == nil {
		t.Error("-ops del accepted")
	}
}
