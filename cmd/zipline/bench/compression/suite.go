package compression

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// Suite is a whole benchmark run, as the commands configure it from flags:
// the corpus check, the memory table and the throughput matrix on a fresh
// redis-server, then the report and its charts.
type Suite struct {
	Quick      bool
	Memory     bool // run the memory measurement
	Matrix     bool // run the throughput matrix
	Keys       int  // values per memory class, and keys of the matrix
	Seed       int64
	Classes    []corpus.Class
	Goroutines []int
	Batches    []int
	Duration   time.Duration
	Warmup     time.Duration
	// Out is the markdown file; the charts go beside it, named after it
	// ("compression.md" → "compression-memory.svg"...). Empty writes the
	// markdown, without charts, to Stdout at the end.
	Out       string
	Reference string // the client zipline is held against, if it runs
	Command   string // shown at the top of the report
	Title     string
	Notes     []string
	Progress  io.Writer // progress lines; nil for none
	Stdout    io.Writer // the summary at the end; nil for none
}

// Quick-mode defaults: 9 cells of GLIDE's matrix, short phases.
var (
	QuickGoroutines = []int{1, 10, 100}
	QuickBatches    = []int{1, 10, 50}
)

const (
	quickDuration = 400 * time.Millisecond
	quickWarmup   = 150 * time.Millisecond
)

// suiteFlags holds the flag values before Finish turns them into a Suite.
type suiteFlags struct {
	fs                           *flag.FlagSet
	quick, memory, matrix        bool
	keys                         int
	seed                         int64
	classes, goroutines, batches string
	duration, warmup             time.Duration
}

// RegisterFlags defines the suite's flags on fs and returns a function
// that, after fs.Parse, builds the Suite: -quick sets shorter phases and
// fewer cells for every flag not given explicitly.
func RegisterFlags(fs *flag.FlagSet) func() (*Suite, error) {
	f := &suiteFlags{fs: fs}
	fs.BoolVar(&f.quick, "quick", false, fmt.Sprintf("sample the matrix in under 2 minutes: goroutines %s, batches %s, -duration %v, -warmup %v (unless given)",
		joinInts(QuickGoroutines), joinInts(QuickBatches), quickDuration, quickWarmup))
	fs.BoolVar(&f.memory, "memory", true, "run the memory measurement")
	fs.BoolVar(&f.matrix, "matrix", true, "run the throughput matrix")
	fs.IntVar(&f.keys, "keys", DefaultKeys, "values stored per memory class; also the matrix's keys")
	fs.Int64Var(&f.seed, "seed", 1, "corpus seed")
	fs.StringVar(&f.classes, "classes", "all", "memory classes: all, or a comma list such as json-1884,html-1247")
	fs.StringVar(&f.goroutines, "goroutines", joinInts(GLIDEGoroutines), "matrix goroutine counts")
	fs.StringVar(&f.batches, "batches", joinInts(GLIDEBatches), "matrix batch sizes (1 = plain SET/GET)")
	fs.DurationVar(&f.duration, "duration", 2*time.Second, "measured time of each phase (SET, GET) of each cell")
	fs.DurationVar(&f.warmup, "warmup", 500*time.Millisecond, "unmeasured time before each phase")
	return f.finish
}

func (f *suiteFlags) finish() (*Suite, error) {
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	s := &Suite{Quick: f.quick, Memory: f.memory, Matrix: f.matrix, Keys: f.keys, Seed: f.seed, Duration: f.duration, Warmup: f.warmup}
	var err error
	if s.Classes, err = ParseClasses(f.classes); err != nil {
		return nil, err
	}
	if s.Goroutines, err = ParseInts(f.goroutines); err != nil {
		return nil, err
	}
	if s.Batches, err = ParseInts(f.batches); err != nil {
		return nil, err
	}
	if f.quick {
		if !set["goroutines"] {
			s.Goroutines = QuickGoroutines
		}
		if !set["batches"] {
			s.Batches = QuickBatches
		}
		if !set["duration"] {
			s.Duration = quickDuration
		}
		if !set["warmup"] {
			s.Warmup = quickWarmup
		}
	}
	if s.Keys < 100 {
		return nil, fmt.Errorf("-keys %d: at least 100", s.Keys)
	}
	return s, nil
}

func joinInts(list []int) string {
	var b strings.Builder
	for i, n := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, n)
	}
	return b.String()
}

// Estimate is the expected wall time of the run.
func (s *Suite) Estimate(variants int) time.Duration {
	var d time.Duration
	if s.Memory {
		d += time.Duration(len(s.Classes)*variants) * 600 * time.Millisecond
	}
	if s.Matrix {
		cfg := MatrixConfig{Duration: s.Duration, Warmup: s.Warmup}
		d += time.Duration(len(s.Goroutines)*len(s.Batches)*variants) * cfg.PhaseTime()
	}
	return d
}

func (s *Suite) progressf(format string, args ...any) {
	if s.Progress != nil {
		fmt.Fprintf(s.Progress, format, args...)
	}
}

// Run starts a redis-server, runs the suite with variants, writes the
// report and charts (the report also after every matrix cell, so an
// interrupted run keeps what it measured) and returns it. Interrupting ctx
// ends the run early with a partial report and no error.
func (s *Suite) Run(ctx context.Context, variants []Variant) (*Report, error) {
	if len(variants) == 0 {
		return nil, ErrNoVariants
	}
	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	defer srv.Stop()
	adm, err := dialAdmin(srv.Addr)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	if err := adm.quietMemory(ctx); err != nil {
		return nil, err
	}
	bin, _ := testbed.Binary(srv.Kind)
	r := &Report{Title: s.Title, Command: s.Command, Date: time.Now(), Machine: sysstat.Machine(),
		Server: fmt.Sprintf("%s (%s) on %s, started for the run: no persistence, latency-tracking and slow log off",
			adm.serverVersion(ctx), bin, srv.Addr),
		GoVersion: runtime.Version(), Variants: variants, Reference: s.Reference, Notes: s.Notes}
	s.progressf("%s\nserver: %s\nestimated time: %v\n", r.Machine, r.Server, s.Estimate(len(variants)).Round(time.Second))

	r.Corpus, r.CorpusNote, err = CorpusCheck(s.Classes, min(s.Keys, 2000), s.Seed)
	if err != nil {
		return nil, err
	}
	interrupted := false
	if s.Memory {
		r.Memory, err = MeasureMemory(ctx, MemoryConfig{Addr: srv.Addr, Classes: s.Classes, Keys: s.Keys, Seed: s.Seed,
			Flush: true, Progress: s.Progress}, variants)
		if err != nil {
			if ctx.Err() == nil {
				return r, err
			}
			interrupted = true
		}
		if err := s.write(r); err != nil {
			return r, err
		}
	}
	if s.Matrix && !interrupted {
		if err := adm.flushAll(ctx); err != nil {
			return r, err
		}
		cfg := MatrixConfig{Addr: srv.Addr, Data: NewDataset(corpus.JSON1884, s.Keys, s.Seed, "cb:tps:"),
			Goroutines: s.Goroutines, Batches: s.Batches, Duration: s.Duration, Warmup: s.Warmup,
			ServerPID: srv.PID(), Progress: s.Progress,
			AfterCell: func(m *Matrix) { r.Matrix = m; s.write(r) }}
		r.Matrix, err = RunMatrix(ctx, cfg, variants)
		if err != nil {
			if ctx.Err() == nil {
				return r, err
			}
			interrupted = true
		}
	}
	if interrupted {
		r.Notes = append(r.Notes, "**Interrupted**: the run was stopped early; the tables hold what was measured until then.")
	}
	if err := s.write(r); err != nil {
		return r, err
	}
	s.summary(r)
	return r, nil
}

// write writes the charts and the markdown to s.Out, if set.
func (s *Suite) write(r *Report) error {
	if s.Out == "" {
		return nil
	}
	dir := filepath.Dir(s.Out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prefix := strings.TrimSuffix(filepath.Base(s.Out), filepath.Ext(s.Out))
	links, err := WriteCharts(dir, prefix, r.Memory, r.Matrix, r.Reference)
	if err != nil {
		return err
	}
	r.Charts = links
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		return err
	}
	return os.WriteFile(s.Out, buf.Bytes(), 0o644)
}

// summary prints the misses and where the report went.
func (s *Suite) summary(r *Report) {
	w := s.Stdout
	if w == nil {
		return
	}
	misses := r.Misses()
	byKind := map[string]int{}
	for _, m := range misses {
		byKind[m.Kind]++
	}
	vs := ""
	if r.Reference != "" {
		vs = fmt.Sprintf(", slower than %s %d", r.Reference, byKind["vs reference"])
	}
	fmt.Fprintf(w, "\n%d points miss the bar (memory %d, ratio %d%s, failed %d)\n", len(misses),
		byKind["memory"], byKind["ratio"], vs, byKind["failed"])
	for _, m := range misses {
		fmt.Fprintf(w, "  %-12s %s\n", m.Kind, m.Text)
	}
	if s.Out == "" {
		fmt.Fprintln(w)
		r.WriteMarkdown(w)
		return
	}
	if s.Out != "" {
		fmt.Fprintf(w, "report: %s", s.Out)
		for _, c := range r.Charts {
			fmt.Fprintf(w, ", %s", c.File)
		}
		fmt.Fprintln(w)
	}
}

// ErrNoVariants is returned when nothing would be measured.
var ErrNoVariants = errors.New("compression: no variants to run")
