package netshape

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// TestMain serves as the child of Run when the shaped-path test starts
// this test binary again inside its namespace.
func TestMain(m *testing.M) {
	if child, err := Serve(context.Background(), netnsID); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// netnsID returns the network namespace the process runs in and the
// bytes its loopback has sent, to show that the child ran inside, and
// with lowest, the slowest rate the test accepts, probes the path up to
// extraProbes more times while every probe has been slower: a busy
// machine can slow a probe down, never speed it past the shaper.
func netnsID(ctx context.Context, p *Path, lowest float64) (childInfo, error) {
	id, err := os.Readlink("/proc/self/ns/net")
	info := childInfo{NetNS: id, Mode: p.Mode, Wire: p.WireBytes()}
	for range extraProbes {
		if err != nil || lowest == 0 || slices.Max(append(info.Probes, p.Probe)) >= lowest {
			break
		}
		var r float64
		r, err = Probe(ctx, time.Second, 0)
		info.Probes = append(info.Probes, r)
	}
	return info, err
}

const extraProbes = 2

type childInfo struct {
	NetNS  string
	Mode   Mode
	Wire   int64
	Probes []float64
}

// probeLow and probeHigh bound a probe's rate over the target: the
// bucket's burst and timer slack push it up a little, a busy CPU down.
const probeLow, probeHigh = 0.80, 1.10

// TestShapedLoopback is the CI smoke test of the shaped path: it makes a
// namespace, shapes its loopback to 1 Gbit/s, probes it from inside three
// times, checks the rates, and checks that the namespace is removed.
func TestShapedLoopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := Runner{Mode: ModeNetNS, Args: []string{"-test.run=^$"}, Progress: os.Stderr}
	p := Profile{Name: "1gbit", Rate: 1e9}
	info, setup, err := Run(ctx, r, p, probeLow*float64(p.Rate), netnsID)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("no shaped namespace on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", setup.Describe())
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	if info.NetNS == self || info.Mode != ModeNetNS {
		t.Errorf("child ran in %s (mode %s), the test in %s: not in a namespace of its own", info.NetNS, info.Mode, self)
	}
	if info.Wire <= 0 {
		t.Errorf("child's loopback sent %d bytes: the probe did not cross it", info.Wire)
	}
	// Every probe must stay under the target (the shaper works), and the
	// best must come near it (traffic flows at the rate).
	best := 0.0
	for _, rate := range append(info.Probes, setup.Probe) {
		r := rate / float64(p.Rate)
		t.Logf("probe %s, %.2f of the target", FormatRate(rate), r)
		if r > probeHigh {
			t.Errorf("probe %s, %.2f of the 1 Gbit/s target: above %.2f, the shaper does not hold", FormatRate(rate), r, probeHigh)
		}
		best = max(best, r)
	}
	if best < probeLow {
		t.Errorf("best of %d probes %.2f of the 1 Gbit/s target: below %.2f", len(info.Probes)+1, best, probeLow)
	}
	if len(setup.Qdisc) == 0 || setup.Qdisc[0].Kind != "tbf" && setup.Qdisc[0].Kind != "netem" || setup.Qdisc[0].Bytes == 0 {
		t.Errorf("qdisc counters %+v: traffic did not go through the shaper", setup.Qdisc)
	}
	if !setup.Removed {
		t.Errorf("namespace %s not removed", setup.Namespace)
	}
	if gone, err := Exists(ctx, setup.Namespace); err != nil || gone {
		t.Errorf("namespace %s still listed (%v)", setup.Namespace, err)
	}
}

// TestProxyRate checks the fallback path: the proxy holds a transfer to
// its rate. Like the shaped test, it probes again while the machine is too
// busy to reach the rate, up to three times.
func TestProxyRate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const rate = 200e6
	best := 0.0
	for range 1 + extraProbes {
		got, err := Probe(ctx, time.Second, rate)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("proxy at %s: probe %s", FormatRate(rate), FormatRate(got))
		if got/rate > probeHigh {
			t.Errorf("probe through the proxy %s, %.2f of %s: the proxy does not hold its rate", FormatRate(got), got/rate, FormatRate(rate))
		}
		if best = max(best, got/rate); best >= probeLow {
			break
		}
	}
	if best < probeLow {
		t.Errorf("best probe through the proxy %.2f of %s: below %.2f", best, FormatRate(rate), probeLow)
	}
}

func TestParseProfile(t *testing.T) {
	for _, c := range []struct {
		in    string
		rate  int64
		delay time.Duration
	}{
		{"1gbit", 1e9, 100 * time.Microsecond},
		{"10GBIT", 10e9, 100 * time.Microsecond},
		{"500mbit+1ms", 500e6, time.Millisecond},
		{"2.5gbit+0s", 2.5e9, 0},
		{"unshaped", 0, 0},
	} {
		p, err := ParseProfile(c.in)
		if err != nil || p.Rate != c.rate || p.Delay != c.delay {
			t.Errorf("ParseProfile(%q) = %+v, %v; want rate %d, delay %v", c.in, p, err, c.rate, c.delay)
		}
	}
	for _, bad := range []string{"", "fast", "1gb", "0gbit", "-1mbit", "1gbit+x", "1gbit+-1ms"} {
		if _, err := ParseProfile(bad); err == nil {
			t.Errorf("ParseProfile(%q): no error", bad)
		}
	}
}

func TestParseQdiscStats(t *testing.T) {
	out := `qdisc netem 1: root refcnt 2 limit 100000 delay 100us
 Sent 5000 bytes 10 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
qdisc tbf 10: parent 1:1 rate 1Gbit burst 256Kb lat 536.9ms
 Sent 123456789 bytes 4321 pkt (dropped 7, overlimits 99 requeues 0)
 backlog 0b 0p requeues 0
`
	got := parseQdiscStats(out)
	want := []QdiscStats{{"netem", 5000, 10, 0}, {"tbf", 123456789, 4321, 7}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseQdiscStats = %+v, want %+v", got, want)
	}
}
