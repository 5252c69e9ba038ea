package measure

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Grid is the set of points measured for each client: every operation ×
// value size × concurrency.
type Grid struct {
	Ops   []string // "get", "set"
	Sizes []int    // value bytes
	Conc  []int    // goroutines sharing one client
}

// GridFlags defines -conc, -sizes and -ops on fs, defaulting to the full
// grid (1, 8, 64 and 512 goroutines × 64 B and 2 KiB × GET and SET), so that
// every command picks its subset with the same flags. Call the returned
// function after fs.Parse to get the grid.
func GridFlags(fs *flag.FlagSet) func() (Grid, error) {
	conc := fs.String("conc", "1,8,64,512", "comma-separated goroutine counts")
	sizes := fs.String("sizes", "64,2048", "comma-separated value sizes in bytes")
	ops := fs.String("ops", "get,set", "comma-separated operations (get, set)")
	return func() (Grid, error) {
		var g Grid
		var err error
		if g.Conc, err = intList(*conc, 1, 1<<16); err != nil {
			return g, fmt.Errorf("-conc: %w", err)
		}
		if g.Sizes, err = intList(*sizes, 1, 512<<20); err != nil {
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

// Points lists the grid's cells, ops outermost and concurrency innermost,
// with Client and Run left for the caller to fill in.
func (g Grid) Points() []Cell {
	cells := make([]Cell, 0, len(g.Ops)*len(g.Sizes)*len(g.Conc))
	for _, op := range g.Ops {
		for _, size := range g.Sizes {
			for _, conc := range g.Conc {
				cells = append(cells, Cell{Op: op, Size: size, Conc: conc})
			}
		}
	}
	return cells
}

func intList(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if n < lo || n > hi {
			return nil, fmt.Errorf("%d out of range [%d, %d]", n, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}
