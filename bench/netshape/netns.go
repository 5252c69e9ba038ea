package netshape

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrUnavailable is matched by the error of Create when this machine
// cannot make a namespace: not root, no iproute2, or a kernel that refuses.
// Run falls back to a proxy on it.
var ErrUnavailable = errors.New("netshape: network namespaces unavailable")

// namePrefix starts the name of every namespace this package makes.
const namePrefix = "zlshape-"

// cmdTimeout bounds each ip or tc command.
const cmdTimeout = 10 * time.Second

// Namespace is a network namespace made by Create, with its loopback up.
// Its methods change nothing outside it. It is not safe for concurrent use.
type Namespace struct {
	name   string
	ip, tc string // resolved paths
	closed bool
}

// Create makes a new namespace with a unique name (namePrefix, the
// process id and a random suffix) and brings its loopback up. The caller
// must Close it.
func Create(ctx context.Context) (*Namespace, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: needs root (running as uid %d)", ErrUnavailable, os.Geteuid())
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("%w: no ip command (install iproute2): %v", ErrUnavailable, err)
	}
	tc, err := exec.LookPath("tc")
	if err != nil {
		return nil, fmt.Errorf("%w: no tc command (install iproute2): %v", ErrUnavailable, err)
	}
	var suffix [4]byte
	rand.Read(suffix[:])
	n := &Namespace{name: namePrefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(suffix[:]), ip: ip, tc: tc}
	if _, err := run(ctx, ip, "netns", "add", n.name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if _, err := run(ctx, ip, "-n", n.name, "link", "set", "lo", "up"); err != nil {
		n.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	// Each connection starts afresh: by default the kernel keeps what the
	// last connection to an address learned (its round trip, its
	// congestion threshold) and starts the next one from it, so a cell
	// would inherit the queueing the cell before it caused.
	if _, err := run(ctx, ip, "netns", "exec", n.name, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"); err != nil {
		n.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return n, nil
}

// Name returns the namespace's name, as "ip netns" shows it.
func (n *Namespace) Name() string { return n.name }

// Shaping is what Shape installed on the namespace's loopback.
type Shaping struct {
	Profile Profile
	// Commands are the tc commands that ran, for the report.
	Commands []string
	// Delay is what netem adds each way; 0 when none was asked for or
	// the kernel has no netem (then NetemMissing is set).
	Delay        time.Duration
	NetemMissing bool
}

// tbf parameters. The bucket holds a millisecond of traffic and at least
// 256 KiB, more than loopback's 64 KiB segments; the queue holds 64 MiB,
// so that many connections filling it at once still lose no packet (a
// lost packet on loopback waits 200 ms for its retransmission).
const (
	minBurst   = 256 << 10
	queueLimit = 64 << 20
)

// Shape limits the namespace's loopback to p: a tbf qdisc at p.Rate, under
// a netem qdisc adding p.Delay when the kernel has netem. An unshaped
// profile installs nothing. Shape may be called once.
func (n *Namespace) Shape(ctx context.Context, p Profile) (Shaping, error) {
	sh := Shaping{Profile: p}
	if !p.Shaped() {
		return sh, nil
	}
	rate := strconv.FormatInt(p.Rate, 10) + "bit"
	burst := strconv.FormatInt(max(p.Rate/8/1000, minBurst), 10)
	tbf := []string{"tbf", "rate", rate, "burst", burst, "limit", strconv.Itoa(queueLimit)}
	parent := []string{"root"}
	if p.Delay > 0 {
		us := strconv.FormatInt(p.Delay.Microseconds(), 10) + "us"
		args := []string{"qdisc", "add", "dev", "lo", "root", "handle", "1:", "netem", "delay", us, "limit", "100000"}
		if _, err := n.tcRun(ctx, &sh, args...); err != nil {
			if !strings.Contains(err.Error(), "unknown") && !strings.Contains(err.Error(), "not supported") {
				return sh, err
			}
			sh.NetemMissing = true
			sh.Commands = sh.Commands[:len(sh.Commands)-1]
		} else {
			sh.Delay = p.Delay
			parent = []string{"parent", "1:1", "handle", "10:"}
		}
	}
	args := append(append([]string{"qdisc", "add", "dev", "lo"}, parent...), tbf...)
	if _, err := n.tcRun(ctx, &sh, args...); err != nil {
		return sh, err
	}
	return sh, nil
}

// tcRun runs tc inside the namespace and records the command.
func (n *Namespace) tcRun(ctx context.Context, sh *Shaping, args ...string) ([]byte, error) {
	sh.Commands = append(sh.Commands, "tc "+strings.Join(args, " "))
	return run(ctx, n.tc, append([]string{"-n", n.name}, args...)...)
}

// QdiscStats are the counters of the loopback's root qdisc.
type QdiscStats struct {
	Kind    string // "tbf", "netem", "noqueue"...
	Bytes   int64  // sent
	Packets int64
	Dropped int64
}

// Stats reads the counters of the loopback's qdiscs, root first.
func (n *Namespace) Stats(ctx context.Context) ([]QdiscStats, error) {
	out, err := run(ctx, n.tc, "-n", n.name, "-s", "qdisc", "show", "dev", "lo")
	if err != nil {
		return nil, err
	}
	return parseQdiscStats(string(out)), nil
}

// parseQdiscStats reads "tc -s qdisc show" output:
//
//	qdisc tbf 8001: root refcnt 2 rate 1Gbit burst 256Kb lat 50ms
//	 Sent 123 bytes 4 pkt (dropped 0, overlimits 0 requeues 0)
func parseQdiscStats(out string) []QdiscStats {
	var list []QdiscStats
	for line := range strings.Lines(out) {
		f := strings.Fields(strings.NewReplacer("(", " ", ")", " ", ",", " ").Replace(line))
		switch {
		case len(f) >= 2 && f[0] == "qdisc":
			list = append(list, QdiscStats{Kind: f[1]})
		case len(f) >= 5 && f[0] == "Sent" && len(list) > 0:
			q := &list[len(list)-1]
			q.Bytes, _ = strconv.ParseInt(f[1], 10, 64)
			q.Packets, _ = strconv.ParseInt(f[3], 10, 64)
			for i := 4; i+1 < len(f); i++ {
				if f[i] == "dropped" {
					q.Dropped, _ = strconv.ParseInt(f[i+1], 10, 64)
				}
			}
		}
	}
	return list
}

// Command returns a command running name with args inside the namespace.
// When ctx ends it gets SIGTERM, so that it can stop what it started, and
// SIGKILL 5 s later; it is killed at once if this process dies.
func (n *Namespace) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, n.ip, append([]string{"netns", "exec", n.name, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Close deletes the namespace. It runs even when the benchmark's context
// has ended, and may be called more than once. Processes still inside keep
// the namespace alive until they exit, but it no longer has a name.
func (n *Namespace) Close() error {
	if n.closed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	if _, err := run(ctx, n.ip, "netns", "del", n.name); err != nil {
		return err
	}
	n.closed = true
	return nil
}

// Exists reports whether a namespace named name exists.
func Exists(ctx context.Context, name string) (bool, error) {
	ip, err := exec.LookPath("ip")
	if err != nil {
		return false, err
	}
	out, err := run(ctx, ip, "netns", "list")
	if err != nil {
		return false, err
	}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true, nil
		}
	}
	return false, nil
}

// run runs a command and returns its output, or an error holding its
// stderr.
func run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
