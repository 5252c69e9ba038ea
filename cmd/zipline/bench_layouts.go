package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/layouts"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
)

// cmdBenchLayouts is "zipline bench layouts": the layout benchmark (see
// package layouts).
var cmdBenchLayouts = &command{
	name:     "layouts",
	summary:  "the me-redis memory table: bytes per pair for each layout and value class, and speed ratios",
	synopsis: "[flags]",
	doc: `Measures the me-redis memory table for each value class and layout, with a raised
hash-max-listpack-value variant and extra cells, and the speed of a namespace's operations
against plain commands; writes the report as markdown.

It runs against no server of yours: every cell starts its own throwaway redis-server or
valkey-server (a cluster with -cluster) on a free loopback port, configured as the cell needs
(hash-max-listpack-value), and stops it afterwards. So it takes no -addr or -url.`,
	flags: benchLayoutsFlags,
}

// benchLayoutsFlags defines bench layouts' flags and returns what runs
// it: the me-redis memory table for each value class and layout, with a
// raised hash-max-listpack-value variant and extra cells, and the speed of
// a namespace's operations against plain commands.
func benchLayoutsFlags(fs *flag.FlagSet) func(ctx context.Context, args []string) error {
	pairs := fs.Int("pairs", 100_000, "pairs per memory cell")
	classes := fs.String("classes", "", "value classes, comma-separated (default all: "+strings.Join(classNames(), ",")+")")
	layoutNames := fs.String("layouts", "", "memory table layouts (default "+strings.Join(layouts.MainLayouts(), ",")+")")
	keys := fs.String("keys", "article,user", "key families: article (set-allBooksBelongToUser:<id>), user (user:<id>)")
	raised := fs.Bool("raised", true, "also measure bucket layouts on servers started with a raised hash-max-listpack-value "+
		"(1024; 4096 for html4000)")
	extras := fs.Bool("extras", true, "also measure Dense(512), HashedFor, sparse ids and the layout without the oversize guard")
	memory := fs.Bool("memory", true, "run the memory table")
	cluster := fs.Bool("cluster", false, fmt.Sprintf("measure the memory table on a cluster of %d primaries (used_memory summed "+
		"over them) instead of one server; the speed runs are then off unless -speed is given", layouts.ClusterPrimaries))
	kind := fs.String("kind", "redis", "servers of the memory table: redis, valkey, or both (redis,valkey): each cell is "+
		"measured on each, and the report sets them side by side")
	speed := fs.Bool("speed", true, "run the speed comparison")
	speedDur := fs.Duration("speed-dur", 2*time.Second, "duration of each speed run")
	speedRounds := fs.Int("speed-rounds", 3, "speed runs per cell (the median is reported)")
	speedConc := fs.Int("speed-c", 64, "goroutines in the speed runs")
	speedKeys := fs.Int("speed-keys", 100_000, "keys in the speed runs")
	speedOps := fs.String("speed-ops", "", "speed ops, e.g. get,get/10,mget/100 (default get, set ×1/10/100, mget, mset of 10/100)")
	speedLayouts := fs.String("speed-layouts", "", "layouts compared with plain commands (default zipped,buckets,buckets+zip,buckets+zip+zstd)")
	speedComp := fs.Bool("speed-compressed", true, "add a speed run with json-random values on a hash-max-listpack-value 1024 server, "+
		"where compressed values live in buckets")
	quick := fs.Bool("quick", false, "a fast smoke run: 5,000 pairs, 300 ms speed runs, one round")
	out := fs.String("out", "", "write the markdown report to this file (default: standard output)")
	jsonOut := fs.String("json", "", "also write the raw results to this JSON file")
	render := fs.String("render", "", "measure nothing: render the markdown report from a -json file")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the speed runs to this file")
	return func(ctx context.Context, args []string) error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if *cluster && !set["speed"] {
			*speed = false
		}
		var kinds []testbed.Kind
		for _, k := range splitList(*kind) {
			if k != "redis" && k != "valkey" {
				return usagef("-kind %q: want redis, valkey or redis,valkey", *kind)
			}
			kinds = append(kinds, testbed.Kind(k))
		}
		if len(kinds) == 0 {
			return usagef("-kind: no server named")
		}
		if *quick {
			if !set["pairs"] {
				*pairs = 5000
			}
			if !set["speed-dur"] {
				*speedDur = 300 * time.Millisecond
			}
			if !set["speed-rounds"] {
				*speedRounds = 1
			}
			if !set["speed-keys"] {
				*speedKeys = 5000
			}
		}

		classList, err := pick(*classes, classNames(), func(n string) bool { _, ok := layouts.ClassByName(n); return ok })
		if err != nil {
			return usagef("-classes: %w", err)
		}
		layoutList, err := pick(*layoutNames, layouts.MainLayouts(), func(n string) bool { _, ok := layouts.LayoutByName(n); return ok })
		if err != nil {
			return usagef("-layouts: %w", err)
		}
		var families []layouts.KeyFamily
		for _, name := range strings.Split(*keys, ",") {
			f, ok := layouts.FamilyByName(strings.TrimSpace(name))
			if !ok {
				return usagef("-keys: unknown key family %q (article, user)", name)
			}
			families = append(families, f)
		}
		var ops []layouts.Op
		if *speedOps != "" {
			for _, s := range strings.Split(*speedOps, ",") {
				op, err := layouts.ParseOp(strings.TrimSpace(s))
				if err != nil {
					return usagef("-speed-ops: %w", err)
				}
				ops = append(ops, op)
			}
		}
		var speedLay []string
		if *speedLayouts != "" {
			speedLay = splitList(*speedLayouts)
		}

		rep := &layouts.Report{
			Command: strings.TrimSpace("zipline bench layouts " + strings.Join(args, " ")),
			Date:    time.Now(),
			Machine: sysstat.Machine() + "; client and server share the CPUs",
			Go:      runtime.Version(),
			Pairs:   *pairs,
		}
		if *quick {
			rep.Notes = append(rep.Notes, "**-quick run**: fewer pairs and short speed runs; not for publication")
		}
		progress := os.Stderr
		if *render != "" {
			b, err := os.ReadFile(*render)
			if err != nil {
				return err
			}
			rep = &layouts.Report{}
			if err := json.Unmarshal(b, rep); err != nil {
				return fmt.Errorf("-render %s: %w", *render, err)
			}
			return writeReport(rep, *out, progress)
		}

		if *memory {
			if *cluster {
				rep.Notes = append(rep.Notes, fmt.Sprintf("memory measured on a cluster of %d primaries without replicas: "+
					"`used_memory` growth summed over the primaries", layouts.ClusterPrimaries))
			}
			for _, k := range kinds {
				runner := &layouts.MemoryRunner{Pairs: rep.Pairs, Log: progress, Cluster: *cluster, Kind: k}
				if err := runMemoryTable(ctx, rep, runner, families, classList, layoutList, *raised, *extras, progress); err != nil {
					return err
				}
			}
			runtime.GC() // the classes' values are no longer needed
		}

		if *speed {
			configs := []layouts.SpeedConfig{{
				Family: layouts.ArticleKeys, Class: "ints", Keys: *speedKeys, Layouts: speedLay, Ops: ops,
				Goroutines: *speedConc, Duration: *speedDur, Rounds: *speedRounds, Log: progress,
			}}
			if *speedComp && *speedLayouts == "" {
				configs = append(configs, layouts.SpeedConfig{
					Family: layouts.ArticleKeys, Class: "json-random", Keys: *speedKeys,
					Layouts: []string{"buckets+zip", "buckets+zip+zstd", "buckets+zip+dict"},
					Ops:     ops, Goroutines: *speedConc, Duration: *speedDur, Rounds: *speedRounds, ListpackValue: 1024, Log: progress,
				})
			}
			if *cpuprofile != "" {
				f, err := os.Create(*cpuprofile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			for _, cfg := range configs {
				fmt.Fprintf(progress, "bench layouts: speed, %s values\n", cfg.Class)
				s, err := layouts.RunSpeed(ctx, cfg)
				if err != nil {
					return err
				}
				if rep.Server == "" {
					rep.Server = s.Server
				}
				rep.Speed = append(rep.Speed, s)
			}
		}

		if *jsonOut != "" {
			b, err := json.MarshalIndent(rep, "", " ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
				return err
			}
		}
		return writeReport(rep, *out, progress)
	}
}

// writeReport writes rep's markdown to the file out, or to standard output.
func writeReport(rep *layouts.Report, out string, progress io.Writer) error {
	var buf bytes.Buffer
	if err := rep.WriteMarkdown(&buf); err != nil {
		return err
	}
	if out == "" {
		_, err := io.Copy(os.Stdout, &buf)
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "bench layouts: wrote %s\n", out)
	return nil
}

// runMemoryTable measures the memory cells into rep.
func runMemoryTable(ctx context.Context, rep *layouts.Report, runner *layouts.MemoryRunner, families []layouts.KeyFamily,
	classes, layoutNames []string, raised, extras bool, progress io.Writer) error {
	cells := memoryCells(families, classes, layoutNames, raised, extras)
	data := &layouts.DataSet{Pairs: rep.Pairs}
	runner.Data = data
	fmt.Fprintf(progress, "bench layouts: %d memory cells of %d pairs on %s\n", len(cells), rep.Pairs, runner.Kind)
	res, err := runner.Run(ctx, cells, nil)
	if err != nil {
		return err
	}
	for i := range res {
		res[i].Server = runner.Server
	}
	rep.Memory = append(rep.Memory, res...)
	if rep.Server == "" {
		rep.Server = runner.Server
	}
	if len(rep.Classes) > 0 {
		return nil // measured with the first server
	}
	for _, name := range classes {
		d, err := data.Get(name)
		if err != nil {
			return err
		}
		st, err := d.Stat(rep.Pairs, layouts.DictSpecs()...)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rep.Classes = append(rep.Classes, st)
	}
	return nil
}

func classNames() []string {
	var out []string
	for _, c := range layouts.Classes() {
		out = append(out, c.Name)
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// pick returns the names in list (comma-separated), or def if list is
// empty, checking each with known.
func pick(list string, def []string, known func(string) bool) ([]string, error) {
	if list == "" {
		return def, nil
	}
	names := splitList(list)
	for _, n := range names {
		if !known(n) {
			return nil, fmt.Errorf("unknown name %q", n)
		}
	}
	return names, nil
}

// memoryCells lists the cells of a run: the main table for each key
// family, the raised-limit variant, and the extra cells.
func memoryCells(families []layouts.KeyFamily, classes, layoutNames []string, raised, extras bool) []layouts.Cell {
	var cells []layouts.Cell
	small := func(class string) bool { c, _ := layouts.ClassByName(class); return c.Small }
	dict := func(l string) bool { lay, _ := layouts.LayoutByName(l); return lay.Dict != nil }
	for _, f := range families {
		for _, class := range classes {
			for _, l := range layoutNames {
				if dict(l) && small(class) {
					continue
				}
				cells = append(cells, layouts.Cell{Family: f, Class: class, Layout: l})
			}
		}
	}
	if raised {
		for _, f := range families {
			for _, class := range classes {
				if small(class) {
					continue // every value fits 64 B already
				}
				lpv := 1024
				if class == "html4000" {
					lpv = 4096
				}
				for _, l := range layoutNames {
					if strings.HasPrefix(l, "buckets") {
						cells = append(cells, layouts.Cell{Family: f, Class: class, Layout: l, ListpackValue: lpv})
					}
				}
			}
		}
	}
	if extras {
		has := func(class string) bool {
			for _, c := range classes {
				if c == class {
					return true
				}
			}
			return false
		}
		add := func(f layouts.KeyFamily, class string, sparse bool, lpv int, ls ...string) {
			if !has(class) {
				return
			}
			for _, l := range ls {
				cells = append(cells, layouts.Cell{Family: f, Class: class, Layout: l, Sparse: sparse, ListpackValue: lpv})
			}
		}
		a, u := layouts.ArticleKeys, layouts.UserKeys
		for _, f := range families {
			add(f, "counters", false, 0, "dense100+zip", "dense512+zip", "dense126+zip")
			add(f, "ints", false, 0, "dense100+zip", "dense512+zip", "hashed+zip")
		}
		// Sparse ids: the Dense trap and Hashed buckets.
		add(a, "ints", true, 0, "plain", "buckets+zip", "dense512+zip", "hashed+zip")
		add(u, "ints", true, 0, "plain", "buckets+zip", "hashed+zip")
		add(a, "html500", true, 0, "plain", "buckets+zip", "hashed+zip")
		// Without the guard.
		add(a, "mixed", false, 0, "buckets+zip, no guard")
		add(a, "html500", false, 0, "buckets+zip, no guard")
		add(a, "json-random", false, 0, "buckets+zip, no guard")
		// A larger dictionary and level for the JSON classes.
		for _, f := range families {
			for _, class := range []string{"json-random", "json-461", "json-98", "html100"} {
				add(f, class, false, 0, "buckets+zip+dict32k/l9")
				if raised {
					add(f, class, false, 1024, "buckets+zip+dict32k/l9")
				}
			}
		}
	}
	return cells
}
