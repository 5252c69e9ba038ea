package codec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// rssLimit is the MaxDecompressedSize of most TestPeakRSS cases.
const rssLimit = 64 << 20

// rssSlack is the memory TestPeakRSS allows a child beyond what its case
// may hold for output: goroutines, decoder workers and their block
// buffers, the copy of the stored value that Decode returns for an invalid
// one (4 × 2.1 MiB at most here), runtime and GC overhead, and under -race
// the detector's shadow memory (about 10 MiB per decoding measured). An
// output-sized allocation (64 MiB and up) does not fit in it.
var rssSlack = map[bool]int64{false: 24 << 20, true: 64 << 20}[raceEnabled]

// rssCase is a hostile value whose decoding TestPeakRSS measures.
type rssCase struct {
	name  string
	limit int64
	value func() []byte
	// expands: the value decodes to more than the limit, so Decode may
	// hold up to the limit (plus a block) for each call before it stops.
	// Otherwise the value is refused before any output is allocated.
	expands bool
	want    error // ErrTooLarge, or nil: returned as stored
}

var rssCases = []rssCase{
	// The reviewer's case: no content size, 1 GiB of output from 106 KiB.
	// Decoding appended block by block, growing the output 1.25 times at a
	// time past the limit.
	{name: "zstd-no-size", limit: rssLimit, expands: true, want: ErrTooLarge,
		value: func() []byte { return envelope(Zstd, zstdHostileFrame(zstdWindow8M, -1, 0, 8192)) }},
	// A window (128 MiB) larger than the limit: it went to a decoder sized
	// for the window, which held up to 128 MiB before the limit was checked.
	{name: "zstd-wide-window", limit: rssLimit, expands: true, want: ErrTooLarge,
		value: func() []byte { return envelope(Zstd, zstdHostileFrame(zstdWindow128M, -1, 0, 8192)) }},
	// A second frame that declares 100 MiB: it was checked against the
	// 128 MiB window decoder the first frame (window 128 MiB) selected.
	{name: "zstd-declared", limit: rssLimit, want: ErrTooLarge,
		value: func() []byte {
			return envelope(Zstd, zstdHostileFrame(zstdWindow128M, -1, 1, 0), zstdHostileFrame(zstdWindow8M, 800*zstdTestBlockMax, 0, 800))
		}},
	// One frame declaring 1 GiB: refused from its header.
	{name: "zstd-declared-first", limit: rssLimit, want: ErrTooLarge,
		value: func() []byte { return envelope(Zstd, zstdHostileFrame(zstdWindow8M, 1<<30, 0, 8192)) }},
	// 60 MiB, then a frame that expands to 1 GiB: each frame was held to
	// the limit on its own.
	{name: "zstd-frames", limit: rssLimit, expands: true, want: ErrTooLarge,
		value: func() []byte {
			return envelope(Zstd, zstdHostileFrame(zstdWindow8M, -1, 0, 480), zstdHostileFrame(zstdWindow8M, -1, 0, 8192))
		}},
	// 510 MiB declared under the default 512 MiB limit, 2.1 MiB of body
	// that expands to the declared size and is invalid only at its end.
	{name: "lz4-huge-declared", limit: DefaultMaxDecompressedSize, want: nil,
		value: func() []byte { return envelope(LZ4, lz4Expanding(510<<20, 510<<20, true)) }},
	// The same just under the limit.
	{name: "lz4-under-limit", limit: rssLimit, want: nil,
		value: func() []byte { return envelope(LZ4, lz4Expanding(rssLimit-1, rssLimit-1, true)) }},
	// Declares just under the limit; expands to 80 MiB, from 330 KB.
	{name: "lz4-expands-past-limit", limit: rssLimit, want: nil,
		value: func() []byte { return envelope(LZ4, lz4Expanding(rssLimit-1, 80<<20, false)) }},
}

// TestPeakRSS decodes each hostile value in a child process, once and four
// times at once, and checks the child's peak resident memory during the
// decoding: at most limit × concurrency + rssSlack for a value that
// expands past the limit, and rssSlack for one that must be refused before
// its output is allocated. The child runs this test binary again
// (TestPeakRSSChild) and reports its VmHWM, reset to the current RSS
// through /proc/self/clear_refs just before it decodes.
func TestPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes up to 4 × 64 MiB in child processes")
	}
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Skipf("needs Linux /proc: %v", err)
	}
	for _, tc := range rssCases {
		for _, conc := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, conc), func(t *testing.T) {
				bound := int64(rssSlack)
				if tc.expands {
					bound += tc.limit * int64(conc)
				}
				r := runRSSChild(t, tc.name, conc)
				t.Logf("peak RSS growth %.1f MiB (bound %.1f MiB), outcome %s", mib(r.growth), mib(bound), r.outcome)
				if want := outcomeName(tc.want); r.outcome != want {
					t.Errorf("outcome %s, want %s", r.outcome, want)
				}
				if r.growth > bound {
					t.Errorf("peak RSS grew by %.1f MiB, more than %.1f MiB", mib(r.growth), mib(bound))
				}
			})
		}
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

type rssResult struct {
	growth  int64 // bytes
	outcome string
}

// runRSSChild runs TestPeakRSSChild for the case and parses its report.
func runRSSChild(t *testing.T, name string, conc int) rssResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSChild$", "-test.count=1", "-test.v")
	// GORACE: the race detector otherwise waits a second before exiting.
	cmd.Env = append(os.Environ(), "ZIPLINE_RSS_CASE="+name, "ZIPLINE_RSS_CONC="+strconv.Itoa(conc),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var r rssResult
	var base, hwm int64
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "RSS-REPORT "); ok {
			if _, err := fmt.Sscanf(rest, "base=%d hwm=%d outcome=%s", &base, &hwm, &r.outcome); err != nil {
				t.Fatalf("child report %q: %v", line, err)
			}
			r.growth = (hwm - base) << 10
			return r
		}
	}
	t.Fatalf("child printed no report:\n%s", out)
	return r
}

// outcomeName names what Decode did with a value.
func outcomeName(err error) string {
	switch {
	case err == nil:
		return "stored"
	case errors.Is(err, ErrTooLarge):
		return "too-large"
	}
	return "error"
}

// TestPeakRSSChild is TestPeakRSS's child: it does nothing unless
// ZIPLINE_RSS_CASE names a case.
func TestPeakRSSChild(t *testing.T) {
	name := os.Getenv("ZIPLINE_RSS_CASE")
	if name == "" {
		t.Skip("run by TestPeakRSS")
	}
	conc, err := strconv.Atoi(os.Getenv("ZIPLINE_RSS_CONC"))
	if err != nil || conc < 1 {
		t.Fatalf("ZIPLINE_RSS_CONC: %v", err)
	}
	var tc *rssCase
	for i := range rssCases {
		if rssCases[i].name == name {
			tc = &rssCases[i]
		}
	}
	if tc == nil {
		t.Fatalf("no case %q", name)
	}
	value := tc.value()
	backend := Backend(value[4])
	c := mustNew(t, backend, WithMaxDecompressedSize(tc.limit))
	// Warm up: build the decoders with a small value.
	warm, _ := c.Encode(nil, bytes.Repeat([]byte("warm up "), 1000))
	if _, err := c.Decode(nil, warm); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting VmHWM: %v", err)
	}
	base := procStatusKB(t, "VmRSS")

	outcomes := make([]string, conc)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() {
			<-start
			got, err := c.Decode(nil, value)
			switch {
			case err != nil:
				outcomes[i] = outcomeName(err)
			case bytes.Equal(got, value):
				outcomes[i] = "stored"
			default:
				outcomes[i] = fmt.Sprintf("decoded-%d-bytes", len(got))
			}
		})
	}
	close(start)
	wg.Wait()
	hwm := procStatusKB(t, "VmHWM")
	outcome := outcomes[0]
	for _, o := range outcomes {
		if o != outcome {
			outcome = "mixed:" + strings.Join(outcomes, ",")
		}
	}
	runtime.KeepAlive(value)
	fmt.Printf("RSS-REPORT base=%d hwm=%d outcome=%s\n", base, hwm, outcome)
}

// procStatusKB returns a "kB" field of /proc/self/status.
func procStatusKB(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
