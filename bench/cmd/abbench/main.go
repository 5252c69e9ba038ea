// Command abbench compares the zipline client at two git revisions, A and B,
// on one redis-server. It builds cmd/clientbench twice (package revbuild:
// the zipline module at each revision, everything else from this checkout),
// starts one redis-server, and for each point of the grid runs rounds
// alternately A, B, A, B..., each round a fresh clientbench process that
// measures that one cell. It then prints each side's median throughput and
// spread, the ratio A/B, and flags the points where A/B is below -threshold.
//
//	cd bench && go run ./cmd/abbench -b base-issue8        # A is HEAD
//
// abbench itself measures nothing: the numbers are clientbench's
// (package harness), read back as JSON. See README.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/bench/revbuild"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "abbench:", err)
		os.Exit(1)
	}
}

type options struct {
	a, b      string // revisions
	repo      string
	tags      []string
	clients   []string
	grid      harness.Grid
	rounds    int
	duration  time.Duration
	warmup    time.Duration
	threshold float64
	maxOther  float64
	maxWait   time.Duration
	out       string
	bin       string
	buildOnly bool
	swap      bool
	idle      string
}

func parseFlags() (*options, error) {
	o := &options{}
	flag.StringVar(&o.a, "a", "HEAD", "revision A, the one under test (anything git rev-parse accepts)")
	flag.StringVar(&o.b, "b", "", "revision B, the baseline (required)")
	flag.StringVar(&o.repo, "repo", "", "git repository holding the revisions (default: the zipline checkout around bench/)")
	tags := flag.String("tags", "", "build tags for both binaries, e.g. glide to include the GLIDE adapter")
	clients := flag.String("clients", "zipline", "comma-separated clients to measure in both binaries; a peer measures the noise, its A/B should be 1")
	grid := harness.GridFlags(flag.CommandLine)
	flag.BoolVar(&o.swap, "swap", true, "run the sides of every even round B first (A B, B A, A B...), so that neither always goes first; false: A B, A B...")
	flag.IntVar(&o.rounds, "rounds", 5, "rounds per point and side; the table shows medians")
	flag.DurationVar(&o.duration, "duration", time.Second, "measured time per round")
	flag.DurationVar(&o.warmup, "warmup", 500*time.Millisecond, "unmeasured warm-up per round")
	flag.Float64Var(&o.threshold, "threshold", 0.97, "flag points whose A/B median ratio is below this")
	flag.Float64Var(&o.maxOther, "max-other", 25, "clientbench's quiet gate: % of one CPU other processes may use; rounds above it are counted as noisy")
	flag.DurationVar(&o.maxWait, "max-wait", 5*time.Second, "clientbench's quiet gate: longest wait for a quiet moment before a round")
	flag.StringVar(&o.out, "out", "", "also write the markdown report here (rewritten after every point)")
	flag.StringVar(&o.bin, "bin", "", "build the binaries into this directory and keep them (default: a temporary directory)")
	flag.BoolVar(&o.buildOnly, "build-only", false, "build the two binaries (use with -bin) and stop")
	flag.StringVar(&o.idle, "idle", "poll", "idle CPUs during the run: poll (keep them out of sleep states through /dev/cpu_dma_latency, needs root; see harness/idle.go) or os (the kernel's choice)")
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if o.b == "" {
		return nil, errors.New("-b (the baseline revision) is required")
	}
	if o.rounds < 1 || o.rounds > 1000 || o.duration <= 0 || o.warmup < 0 || o.threshold <= 0 || o.maxOther < 0 || o.maxWait < 0 {
		return nil, errors.New("need 1 ≤ -rounds ≤ 1000, -duration > 0, -warmup ≥ 0, -threshold > 0, -max-other ≥ 0, -max-wait ≥ 0")
	}
	// Leave out of both the adapters that would not build against an older
	// revision (zipline's cluster adapter, the variants of recent options):
	// clientbench compares the default clients.
	o.tags = []string{"anyrev"}
	if *tags != "" {
		o.tags = append(o.tags, strings.Split(*tags, ",")...)
	}
	for _, c := range strings.Split(*clients, ",") {
		if c = strings.TrimSpace(c); c != "" {
			o.clients = append(o.clients, c)
		}
	}
	if len(o.clients) == 0 {
		return nil, errors.New("-clients is empty")
	}
	var err error
	o.grid, err = grid()
	return o, err
}

// side is one revision and the clientbench binary built at it.
type side struct {
	name    string // "A" or "B"
	rev     string // as given
	hash    string
	subject string
	bin     string
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	sess := harness.Begin("abbench", "")
	ctx := sess.Context()

	binDir := o.bin
	if binDir == "" {
		if binDir, err = os.MkdirTemp("", "abbench-"); err != nil {
			return err
		}
		defer os.RemoveAll(binDir)
	} else if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	sides, err := buildSides(ctx, o, binDir)
	if err != nil || o.buildOnly {
		return err
	}

	idleLine, releaseIdle, err := harness.IdleSetting(o.idle)
	if err != nil {
		return err
	}
	defer releaseIdle()

	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	if _, err := srv.Do(ctx, "FLUSHALL"); err != nil {
		return fmt.Errorf("FLUSHALL: %w", err)
	}
	version := "redis-server"
	if info, err := srv.Info(ctx, "server"); err == nil {
		version += " " + info["redis_version"]
	}

	points := o.grid.Points()
	total := len(points) * len(o.clients) * o.rounds * len(sides)
	perRound := o.duration + o.warmup + 700*time.Millisecond // quiet-gate sample, start, prefill, connect
	fmt.Fprintf(os.Stderr, "%d rounds, about %v\n", total, (time.Duration(total) * perRound).Round(time.Second))
	rep := &report{
		session: sess, sides: sides, opts: o, threshold: o.threshold,
		env: []string{"machine at start: " + sess.MachineBefore, idleLine, "server: " + version + " on " + srv.Addr + ", started once by abbench"},
	}
	started := time.Now()
	done := 0
	var measureErr error
	for _, pt := range points {
		for _, client := range o.clients {
			cell := pt
			cell.Client = client
			sess.Rounds(o.rounds, func(r int) {
				cell.Run = r
				for _, s := range roundOrder(sides, r, o.swap) {
					if measureErr != nil || sess.Stopped() {
						return
					}
					res, err := s.measure(ctx, o, srv.Addr, srv.PID(), cell)
					if err != nil {
						if !sess.Stopped() {
							measureErr = err
						}
						return
					}
					done++
					logRound(done, total, s.name, &res)
					rep.add(s.name, res)
				}
			})
			if measureErr != nil {
				return measureErr
			}
			sess.Save(o.out, rep.write)
		}
	}
	if sess.Stopped() {
		rep.notes = append(rep.notes, "interrupted: incomplete run.")
	}
	rep.runTime = time.Since(started)
	return sess.End(o.out, rep.write)
}

// buildSides builds clientbench at revisions A and B into binDir.
func buildSides(ctx context.Context, o *options, binDir string) ([]*side, error) {
	sides := []*side{{name: "A", rev: o.a}, {name: "B", rev: o.b}}
	for _, s := range sides {
		start := time.Now()
		s.bin = filepath.Join(binDir, "clientbench-"+s.name)
		bo := revbuild.Options{BenchDir: ".", Repo: o.repo, Package: "./cmd/clientbench", Tags: o.tags}
		var err error
		if s.hash, err = revbuild.Build(ctx, bo, s.rev, s.bin); err != nil {
			return nil, fmt.Errorf("side %s: %w", s.name, err)
		}
		s.subject = commitSubject(ctx, o.repo, s.hash)
		fmt.Fprintf(os.Stderr, "%s = %.12s (%s) %s: built %s in %v\n", s.name, s.hash, s.rev, s.subject,
			s.bin, time.Since(start).Round(100*time.Millisecond))
	}
	return sides, nil
}

// roundOrder returns the sides in the order round r runs them: A, B, or
// with swap B, A in even rounds. A side that always ran first would carry
// any cost of coming first (the previous point's leftovers, a drift within
// the pair) alone; swapping spreads it over both and cancels a linear drift
// over every two rounds.
func roundOrder(sides []*side, r int, swap bool) []*side {
	if swap && r%2 == 0 {
		return []*side{sides[1], sides[0]}
	}
	return sides
}

// measure runs one round: s's clientbench measuring cell once against the
// server, and returns its result. An error means the process itself failed
// (a bad flag, an unknown client); a failed measurement is Result.Failed.
func (s *side) measure(ctx context.Context, o *options, addr string, pid int, cell harness.Point) (harness.Result, error) {
	args := []string{"-json", "-ceiling=false", "-runs", "1",
		"-addr", addr, "-server-pid", strconv.Itoa(pid),
		"-clients", cell.Client, "-ops", cell.Op, "-sizes", strconv.Itoa(cell.Size), "-conc", strconv.Itoa(cell.Conc),
		"-duration", o.duration.String(), "-warmup", o.warmup.String(),
		"-max-other", strconv.FormatFloat(o.maxOther, 'f', -1, 64), "-max-wait", o.maxWait.String()}
	cmd := exec.CommandContext(ctx, s.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return harness.Result{}, fmt.Errorf("side %s: %s %s: %w\n%s", s.name, s.bin, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	var res harness.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return res, fmt.Errorf("side %s: reading clientbench's result: %w\n%s", s.name, err, stdout.String())
	}
	res.Run = cell.Run
	return res, nil
}

// commitSubject returns the first line of hash's commit message, or "".
func commitSubject(ctx context.Context, repo, hash string) string {
	if repo == "" {
		repo = "."
	}
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "log", "-1", "--format=%s", hash).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func logRound(done, total int, name string, res *harness.Result) {
	prefix := fmt.Sprintf("[%d/%d] %s %s round %d %s:", done, total, res.Point, res.Client, res.Run, name)
	if res.Failed != "" {
		fmt.Fprintf(os.Stderr, "%s FAIL %s\n", prefix, res.Failed)
		return
	}
	fmt.Fprintf(os.Stderr, "%s %7s kops/s  other %s%%\n", prefix, harness.Kops(res.OpsPerSec()), harness.Percent(res.OtherCPU))
}
