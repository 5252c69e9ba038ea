package netshape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Mode chooses how Run builds a path.
type Mode string

const (
	ModeAuto  Mode = "auto"  // a shaped namespace, or the proxy where none can be made
	ModeNetNS Mode = "netns" // a shaped namespace, or fail
	ModeProxy Mode = "proxy" // the proxy, even where a namespace could be made
)

// ParseMode reads "auto", "netns" or "proxy".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModeNetNS, ModeProxy:
		return m, nil
	}
	return "", fmt.Errorf("netshape: mode %q: want auto, netns or proxy", s)
}

// Setup says how a path was built and checked, for reports.
type Setup struct {
	Profile Profile
	Mode    Mode   // what ran: ModeNetNS or ModeProxy
	Reason  string // why the proxy ran, if Mode is ModeProxy
	// Namespace is the namespace's name, and Removed reports that it was
	// deleted and is gone from "ip netns list" after the run.
	Namespace string
	Removed   bool
	Shaping   Shaping
	// Probe is the rate a bulk transfer reached on the path before the
	// measurement, in bits per second.
	Probe float64
	// Qdisc holds the loopback's qdisc counters after the measurement
	// (ModeNetNS only): a dropped packet shows there.
	Qdisc []QdiscStats
}

// ProbeRatio is the probe's rate over the profile's, or 0 when unshaped.
func (s Setup) ProbeRatio() float64 {
	if !s.Profile.Shaped() {
		return 0
	}
	return s.Probe / float64(s.Profile.Rate)
}

// Describe is one line on how the path was built: mode, qdiscs, netem and
// the probe.
func (s Setup) Describe() string {
	var b strings.Builder
	switch s.Mode {
	case ModeNetNS:
		fmt.Fprintf(&b, "namespace %s", s.Namespace)
		if len(s.Shaping.Commands) == 0 {
			b.WriteString(", loopback unshaped")
		} else {
			fmt.Fprintf(&b, ", `%s`", strings.Join(s.Shaping.Commands, "; "))
		}
		if s.Shaping.NetemMissing {
			fmt.Fprintf(&b, "; no netem in this kernel, so no delay (asked for %v)", s.Profile.Delay)
		}
	case ModeProxy:
		b.WriteString("rate-limiting TCP proxy")
		if !s.Profile.Shaped() {
			b.WriteString(" not needed: direct loopback")
		}
		if s.Reason != "" {
			fmt.Fprintf(&b, " (%s)", s.Reason)
		}
	}
	if s.Probe > 0 {
		fmt.Fprintf(&b, "; probe %s", FormatRate(s.Probe))
		if r := s.ProbeRatio(); r > 0 {
			fmt.Fprintf(&b, " (%.2f of the target)", r)
		}
	} else {
		b.WriteString("; no probe result")
	}
	for _, q := range s.Qdisc {
		if q.Dropped > 0 {
			fmt.Fprintf(&b, "; %s dropped %d packets", q.Kind, q.Dropped)
		}
	}
	if s.Mode == ModeNetNS {
		if s.Removed {
			b.WriteString("; namespace removed")
		} else {
			b.WriteString("; namespace NOT removed")
		}
	}
	return b.String()
}

// Path is a measurement's view of the path it runs on.
type Path struct {
	Profile Profile
	Mode    Mode
	// Probe is the rate the probe reached before the measurement, in bits
	// per second.
	Probe   float64
	proxies []*Proxy
}

// Front returns the address a client should dial to reach the server at
// addr over the path: addr itself in a shaped namespace, or a proxy
// limited to the profile's rate in front of it. The proxies stop when the
// measurement returns.
func (p *Path) Front(addr string) (string, error) {
	if p.Mode == ModeNetNS || !p.Profile.Shaped() {
		return addr, nil
	}
	px, err := NewProxy(addr, p.Profile.Rate)
	if err != nil {
		return "", err
	}
	p.proxies = append(p.proxies, px)
	return px.Addr(), nil
}

// WireBytes returns the bytes moved on the path so far: what the
// namespace's loopback sent, headers included (every packet crosses it
// once), or what the proxies forwarded, payload only. It is -1 when
// unknown (an unshaped path outside a namespace).
func (p *Path) WireBytes() int64 {
	if p.Mode == ModeNetNS {
		n, err := loopbackTxBytes()
		if err != nil {
			return -1
		}
		return n
	}
	if len(p.proxies) == 0 {
		return -1
	}
	var n int64
	for _, px := range p.proxies {
		n += px.Bytes()
	}
	return n
}

func (p *Path) close() {
	for _, px := range p.proxies {
		px.Close()
	}
	p.proxies = nil
}

// loopbackTxBytes reads lo's transmitted bytes from /proc/net/dev, which
// shows the network namespace of the reading process.
func loopbackTxBytes() (int64, error) {
	b, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != "lo" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 9 {
			break
		}
		return strconv.ParseInt(f[8], 10, 64)
	}
	return 0, errors.New("netshape: no lo in /proc/net/dev")
}

// Runner runs measurements on paths.
type Runner struct {
	Mode Mode // "" means ModeAuto
	// Args are the arguments (after the program name) that start this
	// program again as the child that measures inside a namespace, usually
	// os.Args[1:]. The child must call Serve before anything else.
	Args []string
	// Progress receives the child's output; nil discards it.
	Progress io.Writer
	// ProbeTime is how long the probe sends; 0 means one second.
	ProbeTime time.Duration
}

// childEnv marks a process started by Run; Serve looks for it.
const childEnv = "ZIPLINE_NETSHAPE_CHILD"

// envelope is what Run sends the child on its standard input.
type envelope[Req any] struct {
	Profile   Profile
	ProbeTime time.Duration
	Request   Req
}

// reply is what the child sends back on file descriptor 3, which only
// Serve writes to, so nothing the measurement prints can corrupt it.
type reply[Resp any] struct {
	Probe    float64
	Response Resp
	Error    string
}

// Run builds a path for profile p, checks it with a probe and runs fn on
// it with req. In a namespace (Mode ModeAuto or ModeNetNS, where the machine
// allows), fn runs in a child process inside a new namespace shaped to p,
// which Run removes afterwards whatever happens: the child is this program
// started again with r.Args, and its Serve calls fn. Otherwise (Mode
// ModeProxy, or ModeAuto where no namespace can be made) fn runs here, and
// Path.Front puts a rate-limiting proxy in front of the server.
func Run[Req, Resp any](ctx context.Context, r Runner, p Profile, req Req,
	fn func(context.Context, *Path, Req) (Resp, error)) (Resp, Setup, error) {
	var zero Resp
	setup := Setup{Profile: p, Mode: ModeProxy}
	probeTime := orDefault(r.ProbeTime, time.Second)
	if r.Mode != ModeProxy {
		ns, err := Create(ctx)
		switch {
		case err == nil:
			resp, err := runInNamespace[Req, Resp](ctx, r, ns, &setup, req, probeTime)
			return resp, setup, err
		case ctx.Err() != nil:
			return zero, setup, ctx.Err()
		case r.Mode == ModeNetNS || !errors.Is(err, ErrUnavailable):
			return zero, setup, err
		}
		setup.Reason = err.Error()
	}
	var err error
	if setup.Probe, err = Probe(ctx, probeTime, p.Rate); err != nil {
		return zero, setup, fmt.Errorf("netshape: probe: %w", err)
	}
	path := &Path{Profile: p, Mode: ModeProxy, Probe: setup.Probe}
	defer path.close()
	resp, err := fn(ctx, path, req)
	return resp, setup, err
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// runInNamespace shapes ns, runs the child inside it and removes it.
func runInNamespace[Req, Resp any](ctx context.Context, r Runner, ns *Namespace, setup *Setup, req Req, probeTime time.Duration) (resp Resp, err error) {
	setup.Mode, setup.Namespace = ModeNetNS, ns.Name()
	defer func() {
		cerr := ns.Close()
		gone, lerr := Exists(context.Background(), ns.Name())
		setup.Removed = cerr == nil && lerr == nil && !gone
		if err == nil && !setup.Removed {
			err = fmt.Errorf("netshape: namespace %s not removed: %v", ns.Name(), errors.Join(cerr, lerr))
		}
	}()
	if setup.Shaping, err = ns.Shape(ctx, setup.Profile); err != nil {
		return resp, err
	}
	in, err := json.Marshal(envelope[Req]{Profile: setup.Profile, ProbeTime: probeTime, Request: req})
	if err != nil {
		return resp, err
	}
	exe, err := os.Executable()
	if err != nil {
		return resp, err
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return resp, err
	}
	defer rd.Close()
	progress := r.Progress
	if progress == nil {
		progress = io.Discard
	}
	var tail tailBuffer
	cmd := ns.Command(ctx, exe, r.Args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout, cmd.Stderr = progress, io.MultiWriter(progress, &tail)
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		wr.Close()
		return resp, err
	}
	wr.Close() // the child holds its own copy
	out, rerr := io.ReadAll(rd)
	werr := cmd.Wait()
	if st, err := ns.Stats(context.Background()); err == nil {
		setup.Qdisc = st
	}
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	if werr != nil || rerr != nil {
		return resp, fmt.Errorf("netshape: child in %s: %w; its last words: %s", ns.Name(), errors.Join(werr, rerr), tail.String())
	}
	var rep reply[Resp]
	if err := json.Unmarshal(out, &rep); err != nil {
		return resp, fmt.Errorf("netshape: child in %s sent no result (%w); its last words: %s", ns.Name(), err, tail.String())
	}
	setup.Probe = rep.Probe
	if rep.Error != "" {
		return rep.Response, errors.New(rep.Error)
	}
	return rep.Response, nil
}

// Serve is the child's side of Run. If this process was started by Run,
// Serve reads the request, probes the namespace's loopback, runs fn on it,
// sends the result back and returns true; the program should then exit,
// with status 1 if err is not nil (the result could not be sent).
// Otherwise it does nothing and returns false.
func Serve[Req, Resp any](ctx context.Context, fn func(context.Context, *Path, Req) (Resp, error)) (bool, error) {
	if os.Getenv(childEnv) == "" {
		return false, nil
	}
	os.Unsetenv(childEnv) // not for the child's own children
	out := os.NewFile(3, "netshape-result")
	if out == nil {
		return true, errors.New("netshape: no result descriptor")
	}
	defer out.Close()
	var env envelope[Req]
	var rep reply[Resp]
	err := json.NewDecoder(os.Stdin).Decode(&env)
	if err == nil {
		rep.Probe, err = Probe(ctx, env.ProbeTime, 0)
	}
	if err == nil {
		path := &Path{Profile: env.Profile, Mode: ModeNetNS, Probe: rep.Probe}
		rep.Response, err = fn(ctx, path, env.Request)
		path.close()
	}
	if err != nil {
		rep.Error = err.Error()
	}
	return true, json.NewEncoder(out).Encode(rep)
}

// tailBuffer keeps the last tailMax bytes written to it.
type tailBuffer struct{ b []byte }

const tailMax = 2000

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = t.b[len(t.b)-tailMax:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }
