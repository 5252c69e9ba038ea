package doordash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/netshape"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// Run measures every profile, each in a child process inside its own
// shaped namespace (or here, behind a proxy; see netshape.Run), and
// writes the report and chart after each one, so an interrupted run keeps
// what it measured (and returns the interruption's error). The caller must
// have called ServeChild first.
func Run(ctx context.Context, c *Config) (*Report, error) {
	r := &Report{Title: c.Title, Command: c.Command, Date: time.Now(), Machine: sysstat.Machine(), GoVersion: runtime.Version(),
		Menus: c.Menus, Seed: c.Seed, Goroutines: c.Goroutines, Rounds: c.Rounds, Variants: c.Variants, Reference: c.Reference,
		Notes: c.Notes}
	if r.Title == "" {
		r.Title = "DoorDash: large values over a bandwidth limit"
	}
	var err error
	if r.Examples, err = examples(); err != nil {
		return nil, err
	}
	c.progressf("%s\nestimated time: about %v\n", r.Machine, c.Estimate().Round(time.Second))
	runner := netshape.Runner{Mode: c.Mode, Args: c.Args, Progress: c.Progress}
	for _, p := range c.Profiles {
		c.progressf("profile %s: building the path\n", p.Name)
		res, setup, err := netshape.Run(ctx, runner, p, struct{}{}, c.measure)
		res.Setup = setup
		c.progressf("profile %s: %s\n", p.Name, setup.Describe())
		if len(res.Runs) > 0 {
			r.Profiles = append(r.Profiles, res)
		}
		if err != nil {
			if ctx.Err() != nil {
				r.Notes = append(r.Notes, "**Interrupted**: the run was stopped early; the tables hold what was measured until then.")
			}
			return r, errors.Join(err, c.write(r))
		}
		if err := c.write(r); err != nil {
			return r, err
		}
	}
	if len(r.Profiles) == 0 {
		return r, errNoRuns
	}
	c.summary(r)
	return r, nil
}

// examples measures generated menus of DoorDash's two example sizes.
func examples() ([]Example, error) {
	lz4, err := codec.New(codec.LZ4)
	if err != nil {
		return nil, err
	}
	zstd, err := codec.New(codec.Zstd)
	if err != nil {
		return nil, err
	}
	out := []Example{{Name: "Chick-fil-A", Size: 64_220, DoorDash: 10_199}, {Name: "Cheesecake Factory", Size: 350_333, DoorDash: 67_863}}
	for i := range out {
		const seeds = 4
		for seed := range int64(seeds) {
			m := corpus.Menu(out[i].Size, seed)
			l, _ := lz4.Encode(nil, m)
			z, _ := zstd.Encode(nil, m)
			out[i].LZ4 += float64(len(m)) / float64(len(l)) / seeds
			out[i].Zstd += float64(len(m)) / float64(len(z)) / seeds
		}
	}
	return out, nil
}

// write writes the chart and the report to c.Out, if set.
func (c *Config) write(r *Report) error {
	if c.Out == "" {
		return nil
	}
	dir := filepath.Dir(c.Out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var svg bytes.Buffer
	if err := r.LatencyChart(&svg); err != nil {
		return err
	}
	r.Chart = strings.TrimSuffix(filepath.Base(c.Out), filepath.Ext(c.Out)) + "-latency.svg"
	if err := os.WriteFile(filepath.Join(dir, r.Chart), svg.Bytes(), 0o644); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	return os.WriteFile(c.Out, md.Bytes(), 0o644)
}

// summary prints the DoorDash table's goals and where the report went.
func (c *Config) summary(r *Report) {
	w := c.Stdout
	if w == nil {
		return
	}
	if c.Out == "" {
		r.WriteMarkdown(w)
		return
	}
	missed := 0
	for _, g := range r.Goals() {
		mark := "ok  "
		if !g.Met {
			mark, missed = "MISS", missed+1
		}
		fmt.Fprintf(w, "%s %-48s %-9s %.3f (bar %.2f) %s\n", mark, g.What, g.Profile, g.Measured, g.Bar, g.Detail)
	}
	fmt.Fprintf(w, "%d goals missed\nreport: %s, %s\n", missed, c.Out, r.Chart)
}
