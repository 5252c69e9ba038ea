package harness

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// NoisyOther is the other-process CPU (% of one CPU) above which a cell
// counts as disturbed in a report's Noise section (the default -max-other).
const NoisyOther = 25

// Noise is what a report's Noise section says: how much CPU other
// processes used during the cells, and what the quiet gate did.
type Noise struct {
	Others     []float64 // OtherCPU of every cell that has one
	Gate       string    // QuietGate.Describe; empty when the gate was off
	Waited     time.Duration
	Remeasured int
}

// Add records m's other-process CPU, if it was measured.
func (n *Noise) Add(m *Measurement) {
	if m.Failed == "" && m.OtherCPU >= 0 {
		n.Others = append(n.Others, m.OtherCPU)
	}
}

// Write writes the section; mine names the processes that are not
// "other" ("clientbench and redis-server"). Nothing without cells.
func (n *Noise) Write(w io.Writer, mine string) {
	if len(n.Others) == 0 {
		return
	}
	busy := 0
	for _, o := range n.Others {
		if o > NoisyOther {
			busy++
		}
	}
	fmt.Fprintf(w, "\n## Noise\n\nCPU used by processes other than %s during a cell, in %% of one CPU: "+
		"median %.0f%%, max %.0f%%; %d of %d cells above %d%%. (/proc/stat has 10 ms ticks, so a few %% is rounding.)\n",
		mine, Median(n.Others), slices.Max(n.Others), busy, len(n.Others), NoisyOther)
	if n.Gate != "" {
		fmt.Fprintf(w, "\nQuiet gate: %s. It waited %v in all and re-measured %d cells.\n",
			n.Gate, n.Waited.Round(time.Second), n.Remeasured)
	}
}
