package harness

import (
	"flag"
	"fmt"
	"strings"
)

// Point is where the single-server comparison measures a client: one
// client, operation, value size and concurrency, in one run (or round).
type Point struct {
	Client string `json:"client"` // a name registered in package bench
	Op     string `json:"op"`     // "get" or "set"
	Size   int    `json:"size"`   // value bytes
	Conc   int    `json:"conc"`   // goroutines sharing the client
	Run    int    `json:"run"`    // which pass over the points (or round) this is
}

// String names the point without client and run: "GET 64 B c=8".
func (p Point) String() string {
	return fmt.Sprintf("%s %s c=%d", strings.ToUpper(p.Op), SizeLabel(p.Size), p.Conc)
}

// Result is what was measured at a point. It is also the JSON record that
// `clientbench -json` prints, one per line, and cmd/abbench reads.
type Result struct {
	Point
	Measurement
	Remeasured bool `json:"remeasured,omitempty"` // a first attempt was too noisy and was replaced
}

// Grid is the set of points measured for each client: every operation ×
// value size × concurrency.
type Grid struct {
	Ops   []string // "get", "set"
	Sizes []int    // value bytes
	Conc  []int    // goroutines sharing one client
}

// GridFlags defines -conc, -sizes and -ops on fs, defaulting to the full
// grid (1, 8, 64 and 512 goroutines × 64 B and 2 KiB × GET and SET), so that
// clientbench and abbench pick their subset with the same flags. Call the
// returned function after fs.Parse to get the grid.
func GridFlags(fs *flag.FlagSet) func() (Grid, error) {
	conc := fs.String("conc", "1,8,64,512", "comma-separated goroutine counts")
	sizes := fs.String("sizes", "64,2048", "comma-separated value sizes in bytes")
	ops := fs.String("ops", "get,set", "comma-separated operations (get, set)")
	return func() (Grid, error) {
		var g Grid
		var err error
		if g.Conc, err = ParseInts(*conc, 1, 1<<16); err != nil {
			return g, fmt.Errorf("-conc: %w", err)
		}
		if g.Sizes, err = ParseInts(*sizes, 1, 512<<20); err != nil {
			return g, fmt.Errorf("-sizes: %w", err)
		}
		for _, op := range strings.Split(*ops, ",") {
			op = strings.ToLower(strings.TrimSpace(op))
			if op != "get" && op != "set" {
				return g, fmt.Errorf("-ops: unknown op %q (want get, set)", op)
			}
			g.Ops = append(g.Ops, op)
		}
		return g, nil
	}
}

// Points lists the grid's points, ops outermost and concurrency innermost,
// with Client and Run left for the caller to fill in.
func (g Grid) Points() []Point {
	pts := make([]Point, 0, len(g.Ops)*len(g.Sizes)*len(g.Conc))
	for _, op := range g.Ops {
		for _, size := range g.Sizes {
			for _, conc := range g.Conc {
				pts = append(pts, Point{Op: op, Size: size, Conc: conc})
			}
		}
	}
	return pts
}
