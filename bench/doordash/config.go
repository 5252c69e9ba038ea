package doordash

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ziplinekv/zipline/bench/netshape"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

// Config is one run of the benchmark.
type Config struct {
	Menus      int // menus stored and read per variant: 10,000 like DoorDash's sample
	Seed       int64
	Goroutines int // callers sharing each client
	Rounds     int // passes over the variants; the report shows medians
	// QuietGate waits for other processes to go quiet before each variant
	// and measures a disturbed one again (see waitQuiet).
	QuietGate bool
	Profiles  []netshape.Profile
	Mode      netshape.Mode
	Variants  []compression.Variant
	// Reference is the peer zipline must beat at every point, if it is
	// among Variants.
	Reference string
	// CPUProfile, if set, is a path prefix: each phase of the first round
	// writes a CPU profile of the process measuring it, to
	// <prefix>-<profile>-<client>-<backend>-<op>.pprof.
	CPUProfile string
	// Out is the markdown report; the chart goes beside it. Empty writes
	// the report to Stdout.
	Out     string
	Command string // shown at the top of the report
	Title   string
	Notes   []string // paragraphs for the top of the report
	// Args start this program again as the child that measures in a
	// namespace (see netshape.Runner); usually os.Args[1:].
	Args     []string
	Progress io.Writer // progress lines; nil for none
	Stdout   io.Writer
}

// DoorDash's parameters, and the quick run's.
const (
	DefaultMenus      = 10_000
	DefaultGoroutines = 16
	DefaultRounds     = 3
	QuickMenus        = 300
	QuickRounds       = 1
)

// ZiplineVariants are zipline with no compression, LZ4 and zstd, in
// DoorDash's order.
func ZiplineVariants() []compression.Variant {
	return []compression.Variant{compression.Zipline(compression.None), compression.Zipline(compression.LZ4), compression.Zipline(compression.Zstd)}
}

// DefaultProfiles is the -profiles default.
const DefaultProfiles = "1gbit,10gbit,unshaped"

// RegisterFlags defines the benchmark's flags on fs and returns a function
// that, after fs.Parse, builds the Config for variants: -quick sets
// QuickMenus and QuickRounds unless -menus or -rounds are given.
func RegisterFlags(fs *flag.FlagSet, variants []compression.Variant) func() (*Config, error) {
	var (
		quick, quiet      bool
		menus, gor, round int
		seed              int64
		profiles, mode    string
		cpuprofile        string
	)
	fs.BoolVar(&quick, "quick", false, fmt.Sprintf("a short run: -menus %d -rounds %d (unless given)", QuickMenus, QuickRounds))
	fs.IntVar(&menus, "menus", DefaultMenus, "menus stored and read per variant")
	fs.IntVar(&gor, "goroutines", DefaultGoroutines, "goroutines sharing each client")
	fs.IntVar(&round, "rounds", DefaultRounds, "passes over the variants, in rotating order; the report shows medians")
	fs.Int64Var(&seed, "seed", 1, "corpus seed")
	fs.StringVar(&profiles, "profiles", DefaultProfiles, "network profiles: unshaped, or rates such as 1gbit, 10gbit, 500mbit+200us (rate+netem delay)")
	fs.StringVar(&mode, "mode", string(netshape.ModeAuto), "how profiles are built: auto (a shaped namespace, else a rate-limiting proxy), netns or proxy")
	fs.StringVar(&cpuprofile, "cpuprofile", "", "path prefix for a CPU profile of each phase of the first round")
	fs.BoolVar(&quiet, "quiet-gate", true, "wait for other processes to go quiet before each variant, and measure a disturbed one again")
	return func() (*Config, error) {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if quick && !set["menus"] {
			menus = QuickMenus
		}
		if quick && !set["rounds"] {
			round = QuickRounds
		}
		c := &Config{Menus: menus, Seed: seed, Goroutines: gor, Rounds: round, QuietGate: quiet, Variants: variants, CPUProfile: cpuprofile}
		var err error
		if c.Profiles, err = netshape.ParseProfiles(profiles); err != nil {
			return nil, err
		}
		if c.Mode, err = netshape.ParseMode(mode); err != nil {
			return nil, err
		}
		switch {
		case c.Menus < 2:
			return nil, fmt.Errorf("-menus %d: at least 2", c.Menus)
		case c.Goroutines < 1 || c.Goroutines > 4096:
			return nil, fmt.Errorf("-goroutines %d: 1 to 4096", c.Goroutines)
		case c.Rounds < 1 || c.Rounds > 100:
			return nil, fmt.Errorf("-rounds %d: 1 to 100", c.Rounds)
		case len(variants) == 0:
			return nil, compression.ErrNoVariants
		}
		return c, nil
	}
}

// Estimate is a rough wall time for the run, from the run of 2026-11-23
// (bench/RESULTS.md): each pass moves the menus' bytes (a fifth of them
// with LZ4, a ninth with zstd) at the profile's rate, and takes at least
// 100 µs per menu of CPU; every variant is measured twice when the
// machine is busy, and the quiet gate may wait up to quietBudget per
// profile on top.
func (c *Config) Estimate() time.Duration {
	plain := float64(c.Menus) * 75_000 // corpus.Menus' mean size
	var d float64                      // seconds
	for _, p := range c.Profiles {
		for _, v := range c.Variants {
			bytes := plain
			switch v.Backend {
			case compression.LZ4:
				bytes /= 5.7
			case compression.Zstd:
				bytes /= 9
			}
			pass := float64(c.Menus) * 100e-6
			if p.Shaped() {
				pass = max(pass, bytes*8/float64(p.Rate))
			}
			d += 2 * 2 * pass * float64(c.Rounds) // SET and GET, measured twice
		}
		d += float64(c.Menus)*500e-6 + 2 // the menus and the server
		if c.QuietGate {
			d += quietBudget.Seconds()
		}
	}
	return time.Duration(d * float64(time.Second))
}

func (c *Config) progressf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format, args...)
	}
}
