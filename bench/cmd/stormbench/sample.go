package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/testbed"
)

// The commands counted, by their INFO commandstats names.
var (
	topologyCmds = []string{"cluster|shards", "cluster|slots", "cluster|nodes"}
	probeCmds    = []string{"role", "info"}
	countedCmds  = append(append([]string(nil), topologyCmds...), probeCmds...)
)

// node is one cluster node as the benchmark talks to it. Every command the
// benchmark itself sends goes through do, which counts the ones the
// sampler counts, so that the sampler can take them out again: what is
// left is the clients' own. A node's commands and its samples are
// serialised by mu, so that the subtraction is exact.
type node struct {
	srv *testbed.Server
	mu  sync.Mutex
	own map[string]uint64 // counted commands the benchmark sent, replies received

	// The sampler's own connection, kept open between samples (dialling
	// 96 nodes a second would add to the load measured), redialled after
	// an error.
	conn net.Conn
	br   *bufio.Reader
}

func newNode(s *testbed.Server) *node { return &node{srv: s, own: map[string]uint64{}} }

// callTimeout bounds each of the benchmark's own commands.
const callTimeout = 5 * time.Second

// do sends one command of the benchmark's own to n.
func (n *node) do(ctx context.Context, args ...any) (testbed.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.doLocked(ctx, args...)
}

func (n *node) doLocked(ctx context.Context, args ...any) (testbed.Value, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	v, err := n.srv.Do(ctx, args...)
	if err == nil || v.IsError() { // the server answered: it ran the command
		n.own[statName(args)]++
	}
	return v, err
}

// statName is the INFO commandstats name of a command: "get",
// "cluster|shards".
func statName(args []any) string {
	word := func(i int) string {
		if i < len(args) {
			return strings.ToLower(fmt.Sprint(args[i]))
		}
		return ""
	}
	name := word(0)
	switch name {
	case "cluster", "client", "config", "acl", "command", "object", "memory", "xinfo", "function", "script":
		name += "|" + word(1)
	}
	return name
}

// counts are calls per counted command.
type counts map[string]uint64

// read takes one sample of n: the calls of the counted commands so far,
// and how many of them were the benchmark's own, before this INFO.
func (n *node) read(ctx context.Context) (stats, own counts, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	own = counts{}
	for _, c := range countedCmds {
		own[c] = n.own[c]
	}
	text, err := n.infoLocked(ctx)
	if err != nil {
		return nil, nil, err
	}
	n.own["info"]++
	info := testbed.ParseInfo(text)
	stats = counts{}
	for _, c := range countedCmds {
		field, ok := info["cmdstat_"+c]
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(field, "calls="), ",")
		if stats[c], err = strconv.ParseUint(calls, 10, 64); err != nil {
			return nil, nil, fmt.Errorf("%s: INFO commandstats cmdstat_%s %q", n.srv.Addr, c, field)
		}
	}
	return stats, own, nil
}

var infoCommand = []byte("*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n")

// infoLocked sends INFO commandstats on the sampler's connection to n and
// returns the reply.
func (n *node) infoLocked(ctx context.Context) (text string, err error) {
	defer func() {
		if err != nil && n.conn != nil {
			n.conn.Close()
			n.conn, n.br = nil, nil
		}
	}()
	if n.conn == nil {
		d := net.Dialer{Timeout: callTimeout}
		if n.conn, err = d.DialContext(ctx, "tcp", n.srv.Addr); err != nil {
			return "", err
		}
		n.br = bufio.NewReaderSize(n.conn, 16<<10)
	}
	n.conn.SetDeadline(time.Now().Add(callTimeout))
	if _, err := n.conn.Write(infoCommand); err != nil {
		return "", err
	}
	line, err := n.br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "$") {
		return "", fmt.Errorf("%s: INFO commandstats answered %q", n.srv.Addr, line)
	}
	size, err := strconv.Atoi(line[1:])
	if err != nil || size < 0 {
		return "", fmt.Errorf("%s: INFO commandstats answered %q", n.srv.Addr, line)
	}
	buf := make([]byte, size+2)
	if _, err := io.ReadFull(n.br, buf); err != nil {
		return "", err
	}
	return string(buf[:size]), nil
}

// close closes the sampler's connection.
func (n *node) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn != nil {
		n.conn.Close()
		n.conn, n.br = nil, nil
	}
}

// phaseStats is what the sampler and the readers saw in one phase.
type phaseStats struct {
	name string
	dur  time.Duration

	samples     int           // node-seconds sampled
	maxInterval time.Duration // the longest time between two samples of a node
	topoMax     uint64        // most topology queries one node answered in one sample
	topoMaxIn   time.Duration // that sample's interval
	topoMaxAddr string
	roleMaxIn   time.Duration
	infoMaxIn   time.Duration
	topoOver    int // node-samples with more than 5
	topo        counts
	roleMax     uint64
	infoMax     uint64
	probes      counts

	readers             bool // whether readers ran in the phase
	tailed              bool // whether the phase has a tail: 5 s after its event
	gets, failed        int64
	tailFailed          int64 // failed after the phase's event ended (its last 5 s)
	tailClients         int   // clients with a failed GET then
	errs                map[string]int
	failedEndingClients int // clients whose last GET of the phase failed
	wrongValues         int64
}

func (p *phaseStats) topoTotal() (n uint64) {
	for _, c := range topologyCmds {
		n += p.topo[c]
	}
	return n
}

// sampler reads every node's INFO commandstats once a second and charges
// the per-node deltas, less the benchmark's own commands, to the current
// phase.
type sampler struct {
	nodes  []*node
	phases []*phaseStats
	cur    atomic.Int32 // index in phases

	mu   sync.Mutex // guards phases' sampled fields
	prev map[*node]snapshot
	errs int // failed reads of running nodes

	stop chan struct{}
	done chan struct{}
}

type snapshot struct {
	at          time.Time
	stats, own  counts
	initialised bool
}

// startSampler takes the baseline of every node and samples from then on
// until finish.
func startSampler(ctx context.Context, nodes []*node, phases []*phaseStats) (*sampler, error) {
	s := &sampler{nodes: nodes, phases: phases, prev: map[*node]snapshot{}, stop: make(chan struct{}), done: make(chan struct{})}
	if failed := s.sample(ctx); failed > 0 {
		return nil, fmt.Errorf("sampler: %d of %d nodes did not answer INFO commandstats", failed, len(nodes))
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				s.sample(ctx) // the last partial interval
				return
			case <-tick.C:
				s.sample(ctx)
			}
		}
	}()
	return s, nil
}

// setPhase charges the samples from the next one on to phase i.
func (s *sampler) setPhase(i int) { s.cur.Store(int32(i)) }

// finish takes a last sample and stops.
func (s *sampler) finish() {
	close(s.stop)
	<-s.done
}

// sample reads every node at once and charges the deltas; it returns how
// many nodes did not answer (a killed node is not asked).
func (s *sampler) sample(ctx context.Context) (failed int) {
	type result struct {
		stats, own counts
		at         time.Time
		err        error
	}
	res := make([]result, len(s.nodes))
	var wg sync.WaitGroup
	for i, n := range s.nodes {
		if killed(n) {
			res[i].err = errKilled
			continue
		}
		wg.Go(func() {
			st, own, err := n.read(ctx)
			res[i] = result{st, own, time.Now(), err}
		})
	}
	wg.Wait()
	ph := s.phases[s.cur.Load()]
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range s.nodes {
		r := res[i]
		if r.err != nil {
			if r.err != errKilled {
				failed++
				s.errs++
			}
			continue
		}
		p, ok := s.prev[n]
		s.prev[n] = snapshot{r.at, r.stats, r.own, true}
		if !ok {
			continue
		}
		ph.samples++
		in := r.at.Sub(p.at)
		ph.maxInterval = max(ph.maxInterval, in)
		delta := counts{}
		for _, c := range countedCmds {
			d := int64(r.stats[c]-p.stats[c]) - int64(r.own[c]-p.own[c])
			delta[c] = uint64(max(d, 0))
		}
		var topo uint64
		for _, c := range topologyCmds {
			topo += delta[c]
			ph.topo[c] += delta[c]
		}
		if topo > ph.topoMax {
			ph.topoMax, ph.topoMaxAddr, ph.topoMaxIn = topo, n.srv.Addr, in
		}
		if topo > 5 {
			ph.topoOver++
		}
		for _, c := range probeCmds {
			ph.probes[c] += delta[c]
		}
		if delta["role"] > ph.roleMax {
			ph.roleMax, ph.roleMaxIn = delta["role"], in
		}
		if delta["info"] > ph.infoMax {
			ph.infoMax, ph.infoMaxIn = delta["info"], in
		}
	}
	return failed
}

var errKilled = fmt.Errorf("killed")

// killedNodes are the nodes the benchmark killed (by their Server): a
// killed node is not sampled any more.
var killedNodes sync.Map

func killed(n *node) bool { _, ok := killedNodes.Load(n.srv); return ok }
