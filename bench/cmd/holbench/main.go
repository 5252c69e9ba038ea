// Command holbench measures head-of-line blocking: how much 700 KB values
// moving through a client hold up the small requests that share it. 64
// goroutines GET 64-byte values while 4 goroutines each SET and then GET a
// 700 KB value of their own, over and over, all through one client; the
// report gives the small GETs' latency beside the same GETs with no large
// values moving, for zipline, rueidis and go-redis in one run, on unshaped
// loopback and on loopback shaped to 1 Gbit/s (cmd/zipline/bench/netshape:
// a namespace of the run's own, this program started again inside it).
//
//	cd bench
//	go run ./cmd/holbench -out results/hol.md     # 2 profiles × 3 clients × 2 loads × 5 rounds, ~5 min
//	go run ./cmd/holbench -quick                  # 1 round of 2 s cells
//
// A small GET cannot overtake a large value in the same TCP stream, so on a
// shaped path it waits for the bytes ahead of it: one 700 KB value takes
// 5.6 ms at 1 Gbit/s. The report prints that yardstick beside each profile.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/netshape"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "holbench:", err)
		os.Exit(1)
	}
}

// config is the run, from the flags; the child in a namespace parses the
// same flags.
type config struct {
	Clients  []string
	Small    int // goroutines doing small GETs
	Movers   int // goroutines moving large values
	Large    int // bytes per large value
	Duration time.Duration
	Warmup   time.Duration
	Rounds   int
	// CPUProfile, if set, is a path prefix: each cell with large values of
	// the first round writes <prefix>-<profile>-<client>.pprof.
	CPUProfile string
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	fs := flag.NewFlagSet("holbench", flag.ContinueOnError)
	var c config
	clients := fs.String("clients", "zipline,rueidis,goredis", "clients to compare: "+bench.Names())
	profiles := fs.String("profiles", "unshaped,1gbit", "network profiles (see netshape.ParseProfile)")
	mode := fs.String("mode", string(netshape.ModeAuto), "auto (a shaped namespace, else a rate-limiting proxy), netns or proxy")
	out := fs.String("out", "", "also write the markdown report here")
	quick := fs.Bool("quick", false, "1 round of 2 s cells (unless -rounds or -duration are given)")
	fs.IntVar(&c.Small, "small", 64, "goroutines doing 64-byte GETs")
	fs.IntVar(&c.Movers, "movers", 4, "goroutines moving large values (SET then GET of a key of their own)")
	fs.IntVar(&c.Large, "large", 700_000, "bytes per large value")
	fs.DurationVar(&c.Duration, "duration", 4*time.Second, "measured time per cell")
	fs.DurationVar(&c.Warmup, "warmup", 500*time.Millisecond, "unmeasured time per cell")
	fs.IntVar(&c.Rounds, "rounds", 5, "passes over the cells, clients in rotating order; the report shows medians")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "path prefix for a CPU profile of each cell with large values in the first round")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick && !set["rounds"] {
		c.Rounds = 1
	}
	if *quick && !set["duration"] {
		c.Duration = 2 * time.Second
	}
	for _, name := range strings.Split(*clients, ",") {
		if _, ok := bench.Lookup(strings.TrimSpace(name)); !ok {
			return fmt.Errorf("unknown client %q (have %s)", name, bench.Names())
		}
		c.Clients = append(c.Clients, strings.TrimSpace(name))
	}
	if c.Small < 1 || c.Movers < 1 || c.Large < 1 || c.Rounds < 1 || c.Rounds > 100 || c.Duration <= 0 {
		return fmt.Errorf("-small, -movers, -large, -duration must be positive and -rounds 1 to 100")
	}
	if child, err := netshape.Serve(ctx, c.measure); child {
		return err
	}
	ps, err := netshape.ParseProfiles(*profiles)
	if err != nil {
		return err
	}
	m, err := netshape.ParseMode(*mode)
	if err != nil {
		return err
	}
	rep := report{cfg: c, command: "cd bench && go run ./cmd/holbench " + strings.Join(os.Args[1:], " "), date: time.Now()}
	runner := netshape.Runner{Mode: m, Args: os.Args[1:], Progress: os.Stderr}
	for _, p := range ps {
		res, setup, err := netshape.Run(ctx, runner, p, struct{}{}, c.measure)
		fmt.Fprintf(os.Stderr, "profile %s: %s\n", p.Name, setup.Describe())
		res.Setup = setup
		if len(res.Cells) > 0 {
			rep.profiles = append(rep.profiles, res)
		}
		if err != nil {
			if ctx.Err() == nil {
				return err
			}
			rep.interrupted = true
			break
		}
	}
	return rep.write(*out)
}
