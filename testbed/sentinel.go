package testbed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SentinelConfig describes a Sentinel group to start. The zero value starts
// a Redis primary with two replicas, watched by three sentinels with quorum
// two under the name "mymaster".
type SentinelConfig struct {
	// Kind is the server of the data nodes and of the sentinels: Redis
	// (the default) or Valkey, whose server runs as a sentinel too.
	Kind Kind
	// MasterName is the name the sentinels monitor the group under; empty
	// means "mymaster". Letters, digits, '.', '_' and '-' only: sentinels
	// write it unquoted when they rewrite their config file.
	MasterName string
	// Replicas is the number of replicas: 0 means 2, and a negative number
	// means none (a group that cannot fail over).
	Replicas int
	// Sentinels is the number of sentinels: 0 means 3.
	Sentinels int
	// Quorum is how many sentinels must agree that the primary is down:
	// 0 means 2 (1 with a single sentinel). A failover also needs a
	// majority of all the sentinels to elect a leader.
	Quorum int
	// DownAfter is down-after-milliseconds, how long the primary must be
	// silent before a sentinel thinks it down; 0 means one second (the
	// servers' default, 30 s, is far too slow for tests).
	DownAfter time.Duration
	// FailoverTimeout is failover-timeout; 0 means five seconds. A sentinel
	// whose election failed retries after twice this.
	FailoverTimeout time.Duration
	// Password makes the data nodes require it (requirepass), and gives it
	// to every data node as masterauth, since any of them may become a
	// replica, and to the sentinels as auth-pass. Neither it nor Username
	// may hold blanks, quotes or backslashes, which sentinels do not quote
	// when they rewrite their config file.
	Password string
	// Username, with Password, makes the data nodes require that ACL user
	// instead (the default user is disabled); it is their masteruser and
	// the sentinels' auth-user.
	Username string
	// SentinelPassword makes the sentinels require their own password
	// (requirepass), which they also use with each other: a client must
	// keep it apart from the data nodes' credentials.
	SentinelPassword string
	// Args are extra configuration directives for every data node.
	Args []string
}

// Sentinel is a Sentinel-managed group of local processes: one primary,
// its replicas and the sentinels watching them, each a Server in its own
// temporary directory. Data nodes run without persistence; a restarted
// one comes back empty, as a primary of nothing, and is turned into a
// replica by the sentinels.
//
// The sentinels are tuned to react in seconds, not tens of seconds: apart
// from DownAfter and FailoverTimeout, each is told at start-up (SENTINEL
// DEBUG) to INFO the nodes every second instead of every ten, to publish
// its hello every half second instead of every two, and to ping (and
// reconnect) every quarter second instead of every second. A restarted or
// demoted node that claims to be a primary is therefore reconfigured
// after about two seconds (four publish periods) instead of eight to
// twenty; and a sentinel that switches to a new primary reaches it well
// within DownAfter, where with a ping period as long as DownAfter it may
// take the new primary for down and fail over again.
//
// Its operations break the group the way production breaks and then wait,
// bounded by their context (or, without a deadline, by a default that
// grows with DownAfter and FailoverTimeout), until it has settled again:
// see Settle. Nodes and sentinels that are down or paused are left out of
// the checks until they are resumed or restarted.
//
// The sentinels' Servers must not be restarted with Server.Restart, which
// would start them without their config file (they refuse, and Restart
// returns an error): use RestartSentinel.
type Sentinel struct {
	Kind Kind
	// MasterName is the name the sentinels know the group by: what a
	// client asks them for.
	MasterName string
	// Quorum, DownAfter and FailoverTimeout are the sentinels' settings,
	// defaults filled in.
	Quorum          int
	DownAfter       time.Duration
	FailoverTimeout time.Duration
	// Username and Password are the data nodes' credentials, and
	// SentinelPassword the sentinels'; empty when none.
	Username, Password, SentinelPassword string

	nodes     []*Server // data nodes in start order, the first primary at start
	sentinels []*Server
	confs     map[*Server]string // each sentinel's config file

	// beforeFailover, when set (by tests), runs after Failover has found
	// the group settled and before it asks a sentinel to fail over.
	beforeFailover func()
}

// Sentinel tuning (SENTINEL DEBUG): see the Sentinel type.
const (
	sentinelInfoPeriod    = 1000 // ms; the servers' default is 10000
	sentinelPublishPeriod = 500  // ms; the servers' default is 2000
	sentinelPingPeriod    = 250  // ms; the servers' default is 1000
)

var masterNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// SentinelBinary returns the program that runs a sentinel of kind, and the
// arguments that put it in sentinel mode (after its config file): the
// program named by ZIPLINE_REDIS_SENTINEL or ZIPLINE_VALKEY_SENTINEL if
// set, else the server binary (Binary) with --sentinel. redis-sentinel and
// valkey-sentinel are that same program under another name, so the
// sentinels are by default the very build the data nodes run, and need no
// package of their own. The error wraps ErrNoBinary if the server is
// missing; a variable naming a missing file is an error of its own.
func SentinelBinary(kind Kind) (bin string, args []string, err error) {
	env := "ZIPLINE_REDIS_SENTINEL"
	if kind == Valkey {
		env = "ZIPLINE_VALKEY_SENTINEL"
	}
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", nil, fmt.Errorf("testbed: %s=%s: %w", env, p, err)
		}
		bin = p
	} else if bin, err = Binary(kind); err != nil {
		return "", nil, err
	}
	// --sentinel is harmless to a program called *-sentinel.
	return bin, []string{"--sentinel"}, nil
}

// StartSentinel starts a primary and its replicas (--replicaof) on free
// loopback ports, waits until every replica is in sync, then starts the
// sentinels, each with a config file in its own directory, and waits until
// the group has settled (Settle): every sentinel knows the primary, every
// replica and every other sentinel. It returns an error wrapping
// ErrNoBinary if the server or the sentinel is missing.
func StartSentinel(ctx context.Context, cfg SentinelConfig) (*Sentinel, error) {
	if cfg.Kind == "" {
		cfg.Kind = Redis
	}
	if cfg.MasterName == "" {
		cfg.MasterName = "mymaster"
	}
	switch {
	case cfg.Replicas == 0:
		cfg.Replicas = 2
	case cfg.Replicas < 0:
		cfg.Replicas = 0
	}
	if cfg.Sentinels <= 0 {
		cfg.Sentinels = 3
	}
	if cfg.Quorum <= 0 {
		cfg.Quorum = min(2, cfg.Sentinels)
	}
	if cfg.DownAfter <= 0 {
		cfg.DownAfter = time.Second
	}
	if cfg.FailoverTimeout <= 0 {
		cfg.FailoverTimeout = 5 * time.Second
	}
	switch {
	case !masterNameRE.MatchString(cfg.MasterName):
		return nil, fmt.Errorf("testbed: sentinel master name %q: use letters, digits, '.', '_' and '-'", cfg.MasterName)
	case cfg.Quorum > cfg.Sentinels:
		return nil, fmt.Errorf("testbed: sentinel quorum %d is more than the %d sentinels", cfg.Quorum, cfg.Sentinels)
	case cfg.Username != "" && cfg.Password == "":
		return nil, errors.New("testbed: sentinel Username needs a Password")
	case strings.ContainsAny(cfg.Username+cfg.Password, " \t\r\n\"'\\"):
		// Sentinels write auth-user and auth-pass unquoted when they
		// rewrite their config file, and then fail to read it again.
		return nil, errors.New("testbed: sentinel Username and Password must not contain blanks, quotes or backslashes")
	}
	if _, err := Binary(cfg.Kind); err != nil {
		return nil, err
	}
	sbin, smode, err := SentinelBinary(cfg.Kind)
	if err != nil {
		return nil, err
	}
	g := &Sentinel{
		Kind: cfg.Kind, MasterName: cfg.MasterName, Quorum: cfg.Quorum,
		DownAfter: cfg.DownAfter, FailoverTimeout: cfg.FailoverTimeout,
		Username: cfg.Username, Password: cfg.Password, SentinelPassword: cfg.SentinelPassword,
		confs: make(map[*Server]string),
	}
	ctx, cancel := g.bound(ctx)
	defer cancel()

	args := []string{
		// As in a cluster: full syncs start at once and load from the
		// socket, so that a (re)started replica is in sync soon.
		"--repl-diskless-sync-delay", "0",
		"--repl-diskless-load", "swapdb",
	}
	switch {
	case cfg.Username != "":
		args = append(args,
			"--user", "default", "off",
			"--user", cfg.Username, "on", ">"+cfg.Password, "~*", "&*", "+@all",
			"--masteruser", cfg.Username, "--masterauth", cfg.Password)
	case cfg.Password != "":
		args = append(args, "--requirepass", cfg.Password, "--masterauth", cfg.Password)
	}
	args = append(args, cfg.Args...)

	primary, err := g.startNode(ctx, args)
	if err != nil {
		return nil, err
	}
	g.nodes = make([]*Server, 1+cfg.Replicas)
	g.nodes[0] = primary
	errs := make([]error, len(g.nodes))
	var wg sync.WaitGroup
	for i := 1; i < len(g.nodes); i++ {
		wg.Go(func() {
			replicaArgs := append(slices.Clone(args), "--replicaof", "127.0.0.1", strconv.Itoa(primary.Port))
			g.nodes[i], errs[i] = g.startNode(ctx, replicaArgs)
			if errs[i] == nil {
				// Restarted, a node comes back as a primary of nothing,
				// for the sentinels to reconfigure: the port in
				// --replicaof may by then be anyone's.
				g.nodes[i].args = args
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		g.Stop()
		return nil, err
	}
	// The sentinels learn the replicas from the primary's INFO, which they
	// send on connecting: the replicas must be attached by then.
	err = poll(ctx, settleEvery, "waiting for the replicas to sync", func() error {
		for _, r := range g.nodes[1:] {
			if err := g.inSync(ctx, r, primary.Addr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.Stop()
		return nil, err
	}

	// The sentinels' Servers exist before they start, so that the
	// start-up checks know them for sentinels (and their password).
	g.sentinels = make([]*Server, cfg.Sentinels)
	for i := range g.sentinels {
		dir, err := os.MkdirTemp("", "zipline-"+string(g.Kind)+"-sentinel-")
		if err != nil {
			g.Stop()
			return nil, err
		}
		// args are what Server.start would run it with, which a
		// sentinel refuses without its config file: see the Sentinel
		// type.
		g.sentinels[i] = &Server{Kind: g.Kind, bin: sbin, args: smode, dir: dir, ownsDir: true}
		g.confs[g.sentinels[i]] = filepath.Join(dir, "sentinel.conf")
	}
	errs = make([]error, cfg.Sentinels)
	for i, s := range g.sentinels {
		wg.Go(func() { errs[i] = g.startSentinel(ctx, s, primary) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		g.Stop()
		return nil, err
	}
	if _, err := g.Settle(ctx); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}

// Stop kills every data node and sentinel by its PID (paused ones too) and
// removes their directories. It is safe to call more than once.
func (g *Sentinel) Stop() { stopAll(g.sentinels, g.nodes) }

// Nodes returns every data node in start order (the first was the primary
// at start), whatever its role or state.
func (g *Sentinel) Nodes() []*Server { return slices.Clone(g.nodes) }

// Sentinels returns the sentinels, whatever their state: their Addr is
// what a client is given.
func (g *Sentinel) Sentinels() []*Server { return slices.Clone(g.sentinels) }

// SentinelAddrs returns the sentinels' addresses: seeds for a client.
func (g *Sentinel) SentinelAddrs() []string { return addrsOf(g.sentinels) }

// Node returns the data node listening on addr, or nil.
func (g *Sentinel) Node(addr string) *Server { return serverAt(g.nodes, addr) }

// Do sends one command to a data node or a sentinel of the group on a
// fresh connection, after AUTH with the credentials it requires (the data
// nodes' or the sentinels'), and returns the reply; an error reply is an
// error. Server.Do sends no AUTH.
func (g *Sentinel) Do(ctx context.Context, s *Server, args ...any) (Value, error) {
	vs, err := g.session(ctx, s, args)
	if err != nil {
		return Value{}, err
	}
	return vs[0], nil
}

// Primary returns the data node that the running sentinels name as the
// primary (SENTINEL GET-MASTER-ADDR-BY-NAME), after checking that they
// agree and that it answers ROLE as a primary. It does not wait: during a
// failover it returns an error; after an operation has returned, it does
// not.
func (g *Sentinel) Primary(ctx context.Context) (*Server, error) {
	var addr, by string
	for _, s := range g.runningSentinels() {
		a, err := g.namedPrimary(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("testbed: primary: %w", err)
		}
		if addr == "" {
			addr, by = a, s.Addr
		} else if a != addr {
			return nil, fmt.Errorf("testbed: primary: sentinel %s names %s, sentinel %s names %s", by, addr, s.Addr, a)
		}
	}
	if addr == "" {
		return nil, errors.New("testbed: primary: no sentinel is running")
	}
	p := g.Node(addr)
	if p == nil {
		return nil, fmt.Errorf("testbed: primary: the sentinels name %s, which is no data node of this group", addr)
	}
	if err := g.isPrimary(ctx, p); err != nil {
		return nil, fmt.Errorf("testbed: primary: %w", err)
	}
	return p, nil
}

// Replicas returns the running data nodes that replicate from Primary and
// are in sync with it, in start order.
func (g *Sentinel) Replicas(ctx context.Context) ([]*Server, error) {
	p, err := g.Primary(ctx)
	if err != nil {
		return nil, err
	}
	var rs []*Server
	for _, s := range g.runningNodes() {
		if s != p && g.inSync(ctx, s, p.Addr) == nil {
			rs = append(rs, s)
		}
	}
	return rs, nil
}

// Settle waits until the group is healthy and every running sentinel
// agrees on it, and returns the primary. Healthy means that:
//
//   - every running sentinel names the same primary, flags it only as a
//     master (not down, no failover in progress), knows every data node
//     but the primary as a replica and every other sentinel, and sees the
//     running ones healthy: replicas of the primary with their link up,
//     sentinels not down;
//   - the primary is running and answers ROLE as a primary;
//   - every other running data node is its replica and in sync
//     (connected, master_link_status:up, no sync in progress).
func (g *Sentinel) Settle(ctx context.Context) (*Server, error) {
	ctx, cancel := g.bound(ctx)
	defer cancel()
	var p *Server
	err := poll(ctx, settleEvery, "waiting for the sentinel group to settle", func() (err error) {
		p, err = g.probe(ctx)
		return err
	})
	return p, err
}

// Failover is what a failover did.
type Failover struct {
	// Former is the primary before, and Primary the replica the sentinels
	// promoted in its place; their Addr are the old and new addresses.
	Former, Primary *Server
	// Named runs from the kill (or SENTINEL FAILOVER) until a sentinel
	// first named a promoted replica and it answered ROLE as a primary:
	// how long a client that asks the sentinels had no writable primary to
	// find, to within a few milliseconds of polling.
	Named time.Duration
	// Settled runs from the same moment until the group had settled
	// (Settle), with the remaining replicas replicating from Primary.
	Settled time.Duration
	// Again reports that the sentinels failed over once more before the
	// group settled (they took the replica they had first promoted for
	// down), so that Primary is not the replica first named. It should
	// not happen with the tuning described at Sentinel.
	Again bool
}

// KillPrimary kills the current primary (SIGKILL, as a crash would), waits
// until the sentinels name one of its replicas instead and it answers as a
// primary, measuring how long that took, and then until the group has
// settled without the killed node. It refuses when the primary has no
// running replica, or when too few sentinels run to agree and elect a
// leader (the quorum, and a majority of all of them).
func (g *Sentinel) KillPrimary(ctx context.Context) (Failover, error) {
	ctx, cancel := g.bound(ctx)
	defer cancel()
	old, err := g.Settle(ctx)
	if err != nil {
		return Failover{}, err
	}
	if need := max(g.Quorum, len(g.sentinels)/2+1); len(g.runningSentinels()) < need {
		return Failover{}, fmt.Errorf("testbed: kill primary: %d sentinels run, a failover needs %d", len(g.runningSentinels()), need)
	}
	if len(g.runningNodes()) < 2 {
		return Failover{}, fmt.Errorf("testbed: kill primary: %s has no running replica to take over", old.Addr)
	}
	start := time.Now()
	old.Kill()
	// The sentinels try again by themselves when an election or a
	// promotion fails: nothing to reissue.
	return g.awaitFailover(ctx, old, start, nil)
}

// Failover has a sentinel fail the group over by hand (SENTINEL FAILOVER:
// it promotes a replica without asking the others), waits until the
// sentinels name the new primary and it answers as one, and then until
// the group has settled, with the former primary a replica of the new one.
func (g *Sentinel) Failover(ctx context.Context) (Failover, error) {
	ctx, cancel := g.bound(ctx)
	defer cancel()
	old, err := g.Settle(ctx)
	if err != nil {
		return Failover{}, err
	}
	live := g.runningSentinels()
	switch {
	case len(live) == 0:
		return Failover{}, errors.New("testbed: failover: no sentinel is running")
	case len(g.runningNodes()) < 2:
		return Failover{}, fmt.Errorf("testbed: failover: %s has no running replica to take over", old.Addr)
	}
	if g.beforeFailover != nil {
		g.beforeFailover()
	}
	start := time.Now()
	failover := func() error {
		_, err := g.Do(ctx, live[0], "SENTINEL", "FAILOVER", g.MasterName)
		return err
	}
	if err := failover(); err != nil {
		return Failover{}, fmt.Errorf("testbed: failover: %w", err)
	}
	// A failover by hand that the sentinel abandons (its replica not
	// promoted within FailoverTimeout on a loaded machine, or none found
	// fit at the moment it chose) is not tried again by the sentinels:
	// it is asked again.
	// Asked again only while the sentinel asked still names the old
	// primary and runs no failover: one that finished, but whose new
	// primary does not answer as one yet, must not be failed over again.
	reissue := func() error {
		m, err := g.session(ctx, live[0], []any{"SENTINEL", "MASTER", g.MasterName})
		if err != nil {
			return err
		}
		f := fieldMap(m[0])
		if strings.Contains(f["flags"], "failover_in_progress") || net.JoinHostPort(f["ip"], f["port"]) != old.Addr {
			return nil
		}
		return failover()
	}
	// An abandoned attempt can also end with the replica promoted and then
	// turned back by the sentinels (its promotion arrived after they gave
	// up): the group settles on the old primary, and is asked again.
	for attempt := 1; ; attempt++ {
		f, err := g.awaitFailover(ctx, old, start, reissue)
		if !errors.Is(err, errSettledBack) || attempt == 3 {
			return f, err
		}
		if err := failover(); err != nil {
			return f, fmt.Errorf("testbed: failover, asked again: %w", err)
		}
	}
}

// errSettledBack is a failover after which the group settled on the old
// primary again.
var errSettledBack = errors.New("settled")

// awaitFailover waits, after old was killed or failed over at start, until
// a sentinel names another primary that answers as one, and then until the
// group has settled with it. While the sentinels still name old, reissue
// (when not nil) is called every twice FailoverTimeout to start the failover
// again if it was abandoned.
func (g *Sentinel) awaitFailover(ctx context.Context, old *Server, start time.Time, reissue func() error) (Failover, error) {
	f := Failover{Former: old}
	issued := start
	err := poll(ctx, roleEvery, "waiting for the sentinels to name a new primary", func() error {
		var last error = errors.New("no sentinel names a new primary yet")
		namesOld := false
		for _, s := range g.runningSentinels() {
			addr, err := g.namedPrimary(ctx, s)
			if err != nil {
				last = err
				continue
			}
			if addr == old.Addr {
				namesOld = true
				last = fmt.Errorf("sentinel %s still names %s", s.Addr, addr)
				continue
			}
			if p := g.Node(addr); p != nil && g.isPrimary(ctx, p) == nil {
				f.Primary = p
				return nil
			}
		}
		if reissue != nil && namesOld && time.Since(issued) > 2*g.FailoverTimeout {
			issued = time.Now()
			if err := reissue(); err != nil {
				return fmt.Errorf("asking for the failover again: %w", err)
			}
		}
		return last
	})
	if err != nil {
		return f, fmt.Errorf("testbed: failover from %s: %w", old.Addr, err)
	}
	f.Named = time.Since(start)
	p, err := g.Settle(ctx)
	f.Settled = time.Since(start)
	if err != nil {
		return f, err
	}
	if p == old {
		return f, fmt.Errorf("testbed: failover from %s: the sentinels named %s, then %w on %s again", old.Addr, f.Primary.Addr, errSettledBack, p.Addr)
	}
	f.Again = p != f.Primary
	f.Primary = p
	return f, nil
}

// RestartNode starts a data node again on its port (a node still running
// is killed first: a crash and a quick restart), as a fresh, empty
// process that claims to be a primary, and waits until the sentinels have
// made it a replica of the current primary and it is in sync. It returns
// that primary. (If the sentinels still name the node itself, because it
// came back before they noticed it gone, the group settles with it as the
// primary, empty.)
func (g *Sentinel) RestartNode(ctx context.Context, node *Server) (*Server, error) {
	ctx, cancel := g.bound(ctx)
	defer cancel()
	if g.Node(node.Addr) != node {
		return nil, fmt.Errorf("testbed: restart: %s is not a data node of this group", node.Addr)
	}
	// The port was free a moment ago; a server that exits at once
	// (another process took the port) is retried, a few times.
	var err error
	for range 3 {
		if err = node.Restart(); err == nil {
			if err = g.checkPID(ctx, node); err != nil {
				node.kill()
			}
		}
		if !errors.Is(err, errExited) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("testbed: restart %s: %w", node.Addr, err)
	}
	return g.Settle(ctx)
}

// KillSentinel kills a sentinel (SIGKILL). It does not wait: the other
// sentinels go on without it, and RestartSentinel brings it back.
func (g *Sentinel) KillSentinel(sentinel *Server) error {
	if !slices.Contains(g.sentinels, sentinel) {
		return fmt.Errorf("testbed: kill sentinel: %s is not a sentinel of this group", sentinel.Addr)
	}
	sentinel.Kill()
	return nil
}

// PauseSentinel freezes a sentinel (SIGSTOP): it keeps its connections
// but answers nothing. It does not wait. Server.Resume (or
// servertest.Pause's resume) continues it; a sentinel frozen for more than
// two seconds then enters TILT mode for 30 s, in which it answers but
// takes part in no failover.
func (g *Sentinel) PauseSentinel(sentinel *Server) error {
	if !slices.Contains(g.sentinels, sentinel) {
		return fmt.Errorf("testbed: pause sentinel: %s is not a sentinel of this group", sentinel.Addr)
	}
	return sentinel.Pause()
}

// RestartSentinel starts a sentinel again on its port, from the config
// file it rewrote while it ran (so with its own ID and the group as it last
// saw it; a sentinel still running is killed first), and waits until the
// group has settled with it. It returns the primary.
func (g *Sentinel) RestartSentinel(ctx context.Context, sentinel *Server) (*Server, error) {
	ctx, cancel := g.bound(ctx)
	defer cancel()
	conf, ok := g.confs[sentinel]
	if !ok {
		return nil, fmt.Errorf("testbed: restart sentinel: %s is not a sentinel of this group", sentinel.Addr)
	}
	var err error
	for range 3 {
		sentinel.kill()
		if err = g.launchSentinel(ctx, sentinel, conf); !errors.Is(err, errExited) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("testbed: restart sentinel %s: %w", sentinel.Addr, err)
	}
	return g.Settle(ctx)
}

// probe checks once what Settle waits for, and returns the primary or why
// the group has not settled yet.
func (g *Sentinel) probe(ctx context.Context) (*Server, error) {
	live := g.runningSentinels()
	if len(live) == 0 {
		return nil, errors.New("no sentinel is running")
	}
	var addr, by string
	for _, s := range live {
		vs, err := g.session(ctx, s,
			[]any{"SENTINEL", "GET-MASTER-ADDR-BY-NAME", g.MasterName},
			[]any{"SENTINEL", "MASTER", g.MasterName},
			[]any{"SENTINEL", "REPLICAS", g.MasterName},
			[]any{"SENTINEL", "SENTINELS", g.MasterName})
		if err != nil {
			return nil, err
		}
		a, err := hostPort(vs[0])
		if err != nil {
			return nil, fmt.Errorf("sentinel %s: GET-MASTER-ADDR-BY-NAME: %w", s.Addr, err)
		}
		if addr == "" {
			addr, by = a, s.Addr
		} else if a != addr {
			return nil, fmt.Errorf("sentinel %s names %s, sentinel %s names %s", by, addr, s.Addr, a)
		}
		m := fieldMap(vs[1])
		switch {
		case m["flags"] != "master":
			return nil, fmt.Errorf("sentinel %s flags primary %s %q", s.Addr, a, m["flags"])
		case m["num-slaves"] != strconv.Itoa(len(g.nodes)-1):
			return nil, fmt.Errorf("sentinel %s knows %s replicas, not %d", s.Addr, m["num-slaves"], len(g.nodes)-1)
		case m["num-other-sentinels"] != strconv.Itoa(len(g.sentinels)-1):
			return nil, fmt.Errorf("sentinel %s knows %s other sentinels, not %d", s.Addr, m["num-other-sentinels"], len(g.sentinels)-1)
		}
		replicas := entries(vs[2])
		for _, n := range g.runningNodes() {
			if n.Addr == a {
				continue
			}
			r, ok := replicas[n.Addr]
			switch {
			case !ok:
				return nil, fmt.Errorf("sentinel %s does not list replica %s", s.Addr, n.Addr)
			case r["flags"] != "slave":
				return nil, fmt.Errorf("sentinel %s flags replica %s %q", s.Addr, n.Addr, r["flags"])
			case net.JoinHostPort(r["master-host"], r["master-port"]) != a || r["master-link-status"] != "ok":
				return nil, fmt.Errorf("sentinel %s sees replica %s of %s:%s, link %s", s.Addr, n.Addr, r["master-host"], r["master-port"], r["master-link-status"])
			}
		}
		peers := entries(vs[3])
		for _, o := range live {
			if o == s {
				continue
			}
			// master_down records what the other sentinel last said
			// of the primary; it lingers after a failover.
			switch p, ok := peers[o.Addr]; {
			case !ok:
				return nil, fmt.Errorf("sentinel %s does not know sentinel %s", s.Addr, o.Addr)
			case !onlyFlag(p["flags"], "sentinel", "master_down"):
				return nil, fmt.Errorf("sentinel %s flags sentinel %s %q", s.Addr, o.Addr, p["flags"])
			}
		}
	}
	p := g.Node(addr)
	switch {
	case p == nil:
		return nil, fmt.Errorf("the sentinels name %s, which is no data node of this group", addr)
	case !p.running():
		return nil, fmt.Errorf("the sentinels name %s, which is down or paused", addr)
	}
	if err := g.isPrimary(ctx, p); err != nil {
		return nil, err
	}
	for _, n := range g.runningNodes() {
		if n != p {
			if err := g.inSync(ctx, n, p.Addr); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// namedPrimary asks sentinel s for the primary's address.
func (g *Sentinel) namedPrimary(ctx context.Context, s *Server) (string, error) {
	v, err := g.Do(ctx, s, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", g.MasterName)
	if err != nil {
		return "", err
	}
	addr, err := hostPort(v)
	if err != nil {
		return "", fmt.Errorf("sentinel %s: GET-MASTER-ADDR-BY-NAME: %w", s.Addr, err)
	}
	return addr, nil
}

// isPrimary checks that data node s answers ROLE as a primary.
func (g *Sentinel) isPrimary(ctx context.Context, s *Server) error {
	v, err := g.Do(ctx, s, "ROLE")
	if err != nil {
		return err
	}
	if e := v.Elems(); len(e) == 0 || string(e[0].Bytes()) != "master" {
		return fmt.Errorf("%s answers ROLE %v, not as a primary", s.Addr, v)
	}
	return nil
}

// inSync checks that data node s is a replica of primary (an address),
// connected and done syncing.
func (g *Sentinel) inSync(ctx context.Context, s *Server, primary string) error {
	vs, err := g.session(ctx, s, []any{"ROLE"}, []any{"INFO", "replication"})
	if err != nil {
		return err
	}
	e := vs[0].Elems()
	if len(e) < 4 || string(e[0].Bytes()) != "slave" {
		return fmt.Errorf("%s answers ROLE %v, not as a replica", s.Addr, vs[0])
	}
	of := net.JoinHostPort(string(e[1].Bytes()), strconv.FormatInt(e[2].Int(), 10))
	if of != primary || string(e[3].Bytes()) != "connected" {
		return fmt.Errorf("%s is a replica of %s (%s), not of %s", s.Addr, of, e[3].Bytes(), primary)
	}
	repl := ParseInfo(string(vs[1].Bytes()))
	if repl["master_link_status"] != "up" || repl["master_sync_in_progress"] != "0" {
		return fmt.Errorf("replica %s is not in sync (master_link_status:%s, master_sync_in_progress:%s)",
			s.Addr, repl["master_link_status"], repl["master_sync_in_progress"])
	}
	return nil
}

// session sends cmds to s one after another on one fresh connection, after
// AUTH with the credentials s requires, within callTimeout, and returns
// their replies; an error reply is an error naming s and the command.
func (g *Sentinel) session(ctx context.Context, s *Server, cmds ...[]any) ([]Value, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	user, pass := g.Username, g.Password
	if slices.Contains(g.sentinels, s) {
		user, pass = "", g.SentinelPassword
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Addr, err)
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	c.SetDeadline(dl)
	if pass != "" {
		auth := []any{"AUTH", pass}
		if user != "" {
			auth = []any{"AUTH", user, pass}
		}
		cmds = append([][]any{auth}, cmds...)
	}
	var buf []byte
	for _, cmd := range cmds {
		if buf, err = appendCommand(buf, cmd); err != nil {
			return nil, err
		}
	}
	if _, err := c.Write(buf); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Addr, err)
	}
	r := bufio.NewReader(c)
	vs := make([]Value, len(cmds))
	for i, cmd := range cmds {
		if vs[i], err = readValue(r); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Addr, err)
		}
		if vs[i].IsError() {
			return nil, fmt.Errorf("%s: %v: %s", s.Addr, cmd[0], vs[i].Bytes())
		}
	}
	if pass != "" {
		vs = vs[1:]
	}
	return vs, nil
}

// checkPID checks, with the group's credentials, that the server answering
// on s.Addr is s's process (Server.checkPID sends no AUTH). The error wraps
// errExited when it is another one.
func (g *Sentinel) checkPID(ctx context.Context, s *Server) error {
	v, err := g.Do(ctx, s, "INFO", "server")
	// A server just started may be slow to answer on a loaded machine: a
	// call that timed out is asked again, within ctx.
	for ne := net.Error(nil); err != nil && errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil; {
		v, err = g.Do(ctx, s, "INFO", "server")
	}
	if err != nil {
		return fmt.Errorf("testbed: %w", err)
	}
	if pid, info := strconv.Itoa(s.PID()), ParseInfo(string(v.Bytes())); info["process_id"] != pid {
		return fmt.Errorf("%w: %s is served by process %s, not %s", errExited, s.Addr, info["process_id"], pid)
	}
	return nil
}

// startNode starts a data node on a free port and makes sure that the
// server answering there is the process it started.
func (g *Sentinel) startNode(ctx context.Context, args []string) (*Server, error) {
	var err error
	for range 5 {
		var s *Server
		if s, err = startOn(Config{Kind: g.Kind, Args: args}, freePort); err != nil {
			return nil, err
		}
		if err = g.checkPID(ctx, s); err == nil {
			return s, nil
		}
		s.kill()
		s.cleanup()
		if !errors.Is(err, errExited) {
			return nil, err
		}
	}
	return nil, err
}

// startSentinel starts sentinel s, monitoring primary, on a free port,
// with a new config file in its directory.
func (g *Sentinel) startSentinel(ctx context.Context, s *Server, primary *Server) error {
	conf := g.confs[s]
	for range 5 {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := os.WriteFile(conf, []byte(g.sentinelConf(s, primary)), 0o600); err != nil {
			return err
		}
		if err = g.launchSentinel(ctx, s, conf); err == nil {
			return nil
		}
		s.kill()
		if !errors.Is(err, errExited) {
			return err
		}
	}
	return fmt.Errorf("testbed: could not start sentinel %s on a free port", s.bin)
}

// sentinelConf is the config file of sentinel s, monitoring primary.
// Sentinels rewrite it as their view changes (their ID, the other
// sentinels, the replicas, the current primary), so it must be writable.
func (g *Sentinel) sentinelConf(s *Server, primary *Server) string {
	name := g.MasterName
	lines := []string{
		"port " + strconv.Itoa(s.Port),
		"bind 127.0.0.1",
		"daemonize no",
		`save ""`,
		"appendonly no",
		"dir " + confQuote(s.dir),
		"logfile " + confQuote(filepath.Join(s.dir, "server.log")),
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d %d", name, primary.Port, g.Quorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", name, g.DownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", name, g.FailoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", name),
	}
	if g.Username != "" {
		lines = append(lines, fmt.Sprintf("sentinel auth-user %s %s", name, confQuote(g.Username)))
	}
	if g.Password != "" {
		lines = append(lines, fmt.Sprintf("sentinel auth-pass %s %s", name, confQuote(g.Password)))
	}
	if g.SentinelPassword != "" {
		lines = append(lines, "requirepass "+confQuote(g.SentinelPassword))
	}
	return strings.Join(lines, "\n") + "\n"
}

// confQuote quotes a config file argument the way the servers' parser
// reads it.
func confQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(s) + `"`
}

// launchSentinel runs sentinel s from conf, which must come first on its
// command line (Server.start puts the port there), waits until it answers
// and is s's process, and tunes its periods (see the Sentinel type). The
// error wraps errExited if it exited at once, as when its port was taken.
func (g *Sentinel) launchSentinel(ctx context.Context, s *Server, conf string) error {
	cmd := exec.Command(s.bin, append([]string{conf}, s.args...)...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	// A config file it cannot read is reported on stderr, not in the log.
	out, err := os.Create(filepath.Join(s.dir, "stderr.log"))
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testbed: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.paused = cmd, done, false
	s.mu.Unlock()

	err = poll(ctx, 5*time.Millisecond, "waiting for sentinel "+s.Addr+" to answer", func() error {
		select {
		case <-done:
			return nil // reported below
		default:
		}
		return s.ping()
	})
	select {
	case <-done:
		stderr, _ := os.ReadFile(out.Name())
		return fmt.Errorf("%w: %s\n%s", errExited, s.logTail(), bytes.TrimSpace(stderr))
	default:
	}
	if err != nil {
		s.kill()
		return fmt.Errorf("%w: %s", err, s.logTail())
	}
	if err := g.checkPID(ctx, s); err != nil {
		return err
	}
	_, err = g.Do(ctx, s, "SENTINEL", "DEBUG",
		"info-period", sentinelInfoPeriod, "publish-period", sentinelPublishPeriod,
		"ping-period", sentinelPingPeriod)
	return err
}

// onlyFlag reports whether a sentinel's flags for an instance (as
// "s_down,slave,disconnected") are want and nothing else but ignore.
func onlyFlag(flags, want string, ignore ...string) bool {
	found := false
	for f := range strings.SplitSeq(flags, ",") {
		switch {
		case f == want:
			found = true
		case !slices.Contains(ignore, f):
			return false
		}
	}
	return found
}

// hostPort reads an [ip, port] reply (GET-MASTER-ADDR-BY-NAME).
func hostPort(v Value) (string, error) {
	e := v.Elems()
	if len(e) != 2 {
		return "", fmt.Errorf("reply %v, want [ip port]", v)
	}
	return net.JoinHostPort(string(e[0].Bytes()), string(e[1].Bytes())), nil
}

// fieldMap reads a sentinel's description of an instance: in RESP2 a flat
// array of field/value pairs (SENTINEL MASTER, and each element of SENTINEL
// REPLICAS and SENTINEL SENTINELS).
func fieldMap(v Value) map[string]string {
	e := v.Elems()
	m := make(map[string]string, len(e)/2)
	for i := 0; i+1 < len(e); i += 2 {
		m[string(e[i].Bytes())] = string(e[i+1].Bytes())
	}
	return m
}

// entries reads SENTINEL REPLICAS or SENTINEL SENTINELS, by address.
func entries(v Value) map[string]map[string]string {
	es := make(map[string]map[string]string)
	for _, e := range v.Elems() {
		m := fieldMap(e)
		es[net.JoinHostPort(m["ip"], m["port"])] = m
	}
	return es
}

// runningNodes returns the data nodes that can answer: alive and not
// paused.
func (g *Sentinel) runningNodes() []*Server {
	var live []*Server
	for _, s := range g.nodes {
		if s.running() {
			live = append(live, s)
		}
	}
	return live
}

// runningSentinels returns the sentinels that can answer.
func (g *Sentinel) runningSentinels() []*Server {
	var live []*Server
	for _, s := range g.sentinels {
		if s.running() {
			live = append(live, s)
		}
	}
	return live
}

// bound gives ctx a deadline if it has none: every wait ends.
func (g *Sentinel) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	// A failover takes DownAfter, an election and the replicas' resync;
	// an election that fails is retried after twice FailoverTimeout.
	return context.WithTimeout(ctx, 15*time.Second+3*g.FailoverTimeout+5*g.DownAfter)
}
