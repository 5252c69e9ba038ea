// Command rotatebench measures what a credential rotation and a TLS
// certificate renewal cost a client under load, through zipline and
// through go-redis on the same kind of runs, each on a fresh redis-server.
//
// Scenario credentials: every -every a new ACL user is made and handed out
// by the client's credentials provider; once CLIENT LIST shows every
// connection of the client authenticated as it (or -auth-wait has passed),
// the previous user is deleted, which disconnects whoever is still it.
// Scenario certificates: with mutual TLS, every -every the server's
// certificate is replaced (CONFIG SET tls-cert-file, tls-key-file) and so
// is the one the client presents (tls.Config.GetClientCertificate);
// nothing forces a new handshake. Meanwhile 64 goroutines SET and GET keys
// of their own. It reports per client the calls that succeeded and failed,
// the connections the server saw the client open (reconnects), the
// throughput and the longest window without a successful call, as medians
// over interleaved rounds.
//
//	cd bench && go run ./cmd/rotatebench -out results/rotate.md
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"
	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rotatebench:", err)
		os.Exit(1)
	}
}

type options struct {
	clients   []clientDef
	scenarios []string // "credentials", "certificates"
	rounds    int
	rotations int           // credentials rotated per run
	renewals  int           // certificates renewed per run
	every     time.Duration // from one rotation or renewal to the next
	authWait  time.Duration // how long a rotation waits for the connections to switch user
	expires   time.Duration // how far ahead zipline's Credentials.Expires is
	kind      testbed.Kind
	load      setget.Config
	out       string
}

var scenarios = []string{"credentials", "certificates"}

func parseFlags() (*options, error) {
	var (
		clients   = flag.String("clients", harness.JoinNames(clientDefs, clientDef.String), "comma-separated clients: "+harness.JoinNames(clientDefs, clientDef.String))
		scenario  = flag.String("scenario", "credentials,certificates", "credentials, certificates or both")
		rounds    = flag.Int("rounds", 3, "runs of every client per scenario, interleaved")
		rotations = flag.Int("rotations", 6, "credential rotations per run")
		renewals  = flag.Int("renewals", 5, "certificate renewals per run")
		every     = flag.Duration("every", 1500*time.Millisecond, "from the start of one rotation or renewal to the next")
		authWait  = flag.Duration("auth-wait", 5*time.Second, "how long a rotation waits for every connection to be the new user before deleting the previous one")
		expires   = flag.Duration("expires", 1500*time.Millisecond, "zipline: how far ahead of each fetch the credentials' Expires is")
		kind      = flag.String("kind", "redis", "server: redis or valkey")
		callers   = flag.Int("callers", 64, "goroutines")
		keys      = flag.Int("keys", 100, "keys per goroutine")
		timeout   = flag.Duration("timeout", 5*time.Second, "each call's context deadline")
		pause     = flag.Duration("retry-pause", 10*time.Millisecond, "a goroutine's pause after a failed call")
		out       = flag.String("out", "", "write the markdown report to this file")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	o := &options{rounds: *rounds, rotations: *rotations, renewals: *renewals, every: *every, authWait: *authWait,
		expires: *expires, kind: testbed.Kind(*kind), out: *out,
		load: setget.Config{Callers: *callers, Keys: *keys, CallTimeout: *timeout, RetryPause: *pause, Prefix: "rot"}}
	if o.rounds < 1 || o.rotations < 1 || o.renewals < 1 || *callers < 1 || *keys < 1 {
		return nil, errors.New("need -rounds, -rotations, -renewals, -callers and -keys ≥ 1")
	}
	if *timeout <= 0 || *pause < 0 || *every < 0 || *authWait <= 0 || *expires < time.Second {
		return nil, errors.New("need -timeout, -auth-wait > 0, -retry-pause, -every ≥ 0 and -expires ≥ 1s")
	}
	if o.kind != testbed.Redis && o.kind != testbed.Valkey {
		return nil, fmt.Errorf("-kind: %q is neither redis nor valkey", *kind)
	}
	var err error
	if o.clients, err = harness.ParseNames(*clients, clientDefs, clientDef.String); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	if o.scenarios, err = harness.ParseNames(*scenario, scenarios, func(s string) string { return s }); err != nil {
		return nil, fmt.Errorf("-scenario: %w", err)
	}
	return o, nil
}

// outcome is one client's run.
type outcome struct {
	client   clientDef
	scenario string
	round    int
	fig      figures
	err      error
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	sess := harness.Begin("rotatebench", "")
	ctx := sess.Context()
	rep := &report{session: sess, opts: o, env: harness.Environment("")}
	for _, sc := range o.scenarios {
		var defs []clientDef
		for _, d := range o.clients {
			if d.applies(sc) {
				defs = append(defs, d)
			}
		}
		sess.Interleave(o.rounds, len(defs), func(r, i int) {
			d := defs[i]
			oc := outcome{client: d, scenario: sc, round: r}
			var server string
			oc.fig, server, oc.err = runOne(ctx, o, d, sc)
			if rep.server == "" {
				rep.server = server
			}
			logOutcome(oc)
			rep.outcomes = append(rep.outcomes, oc)
		})
	}
	return sess.End(o.out, rep.write)
}

// warmup is how long the load runs before the rotations or renewals
// begin, so that every client has opened the connections it keeps.
const warmup = 1500 * time.Millisecond

// tail is how long the load runs on after the last rotation or renewal.
const tail = time.Second

// runOne starts a fresh server, connects d's client, starts the load,
// rotates the credentials or renews the certificates and measures.
func runOne(ctx context.Context, o *options, d clientDef, scenario string) (figures, string, error) {
	srv, err := testbed.Start(testbed.Config{Kind: o.kind, MutualTLS: scenario == "certificates"})
	if err != nil {
		return figures{}, "", fmt.Errorf("starting the server: %w", err)
	}
	defer srv.Stop()
	a := &admin{srv: srv}
	server := string(o.kind)
	if info, err := srv.Info(ctx, "server"); err == nil {
		server += " " + info["redis_version"] + info["valkey_version"]
	}
	var (
		t          target
		steps      func(context.Context, *figures) error
		handshakes *atomic.Int64
	)
	switch scenario {
	case "credentials":
		r := &rotation{a: a, src: newRotating(o.expires)}
		if err := r.next(ctx); err != nil {
			return figures{}, server, err
		}
		t = target{addr: srv.Addr, creds: r.src}
		steps = func(ctx context.Context, f *figures) error { return r.run(ctx, o, f) }
	case "certificates":
		cs := &certSource{}
		cert, err := srv.ClientCertificate()
		if err != nil {
			return figures{}, server, err
		}
		cs.cur.Store(&cert)
		t = target{addr: srv.TLSAddr, tls: cs.config(srv.TLSConfig)}
		steps = func(ctx context.Context, f *figures) error { return renew(ctx, o, a, cs, f) }
		handshakes = &cs.handshakes
	}
	s, err := d.connect(ctx, t)
	if err != nil {
		return figures{}, server, fmt.Errorf("%s: connect: %w", d.name, err)
	}
	defer s.Close()
	l := setget.Start(o.load, s)
	if err := l.WaitOK(1000, 30*time.Second); err != nil {
		l.Finish()
		return figures{}, server, fmt.Errorf("warming up: %w", err)
	}
	for l.Now() < warmup {
		time.Sleep(setget.Tick) // the warm-up's length, not synchronisation
	}
	var fig figures
	conns, err := a.conns(ctx)
	if err != nil {
		l.Finish()
		return figures{}, server, err
	}
	fig.Conns = len(conns)
	before, err := a.received(ctx)
	if err != nil {
		l.Finish()
		return figures{}, server, err
	}
	a.opened.Store(0) // the connection of the INFO above is in before
	var hs0 int64
	if handshakes != nil {
		hs0 = handshakes.Load()
	}
	from := l.Now()
	err = steps(ctx, &fig)
	if err == nil {
		// The load runs on a while, so that what the last step set off
		// (a reconnect after a deletion, say) is counted.
		err = pace.Sleep(ctx, tail)
	}
	if err == nil {
		conns, err = a.conns(ctx)
	}
	var after int64
	if err == nil {
		after, err = a.received(ctx) // last: its own connection is in after
	}
	ticks, failures := l.Finish()
	if err != nil {
		return figures{}, server, err
	}
	measure(&fig, ticks, failures, from)
	fig.Wrong = l.Wrong()
	if handshakes != nil {
		fig.Handshakes = int(handshakes.Load() - hs0)
	}
	fig.Reconnects = int(after - before - a.opened.Load())
	if fig.Reconnects < 0 {
		return fig, server, fmt.Errorf("the server saw %d connections, fewer than the bench's own %d", after-before, a.opened.Load())
	}
	fig.ConnsEnd = len(conns)
	fig.Closed = fig.Conns + fig.Reconnects - fig.ConnsEnd
	return fig, server, nil
}

// admin sends the bench's own commands, each on a connection of its own
// (testbed's Do), and counts those connections, so that the server's count
// of connections received, less them, is the client's.
type admin struct {
	srv    *testbed.Server
	opened atomic.Int64
}

func (a *admin) do(ctx context.Context, args ...any) (testbed.Value, error) {
	a.opened.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return a.srv.Do(ctx, args...)
}

// received is INFO stats total_connections_received.
func (a *admin) received(ctx context.Context) (int64, error) {
	v, err := a.do(ctx, "INFO", "stats")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(testbed.ParseInfo(string(v.Bytes()))["total_connections_received"], 10, 64)
}

// conns returns the connections of the client under test: id → user.
func (a *admin) conns(ctx context.Context) (map[int64]string, error) {
	v, err := a.do(ctx, "CLIENT", "LIST")
	if err != nil {
		return nil, err
	}
	return clientConns(string(v.Bytes()), clientName), nil
}

// rotation makes the ACL users app0, app1, ... in turn and hands each out.
type rotation struct {
	a    *admin
	src  *rotating
	n    int    // the current user's number
	user string // "" before the first
}

// next makes the next user, with a random password, and makes the
// provider return it.
func (r *rotation) next(ctx context.Context) error {
	if r.user != "" {
		r.n++
	}
	user, pass := "app"+strconv.Itoa(r.n), rand.Text()
	if _, err := r.a.do(ctx, "ACL", "SETUSER", user, "on", ">"+pass, "~*", "&*", "+@all"); err != nil {
		// The server's message may quote the password: withheld.
		return fmt.Errorf("ACL SETUSER %s failed", user)
	}
	r.user = user
	r.src.set(user, pass)
	return nil
}

// run rotates o.rotations times: a new user, a bounded wait for every
// connection of the client to be it, the previous user deleted.
func (r *rotation) run(ctx context.Context, o *options, f *figures) error {
	for range o.rotations {
		// The client has its connections back from the previous deletion
		// (or -auth-wait has passed): those it has now are the ones the
		// rotation should switch in place.
		before, err := r.a.conns(ctx)
		for deadline := time.Now().Add(o.authWait); err == nil && len(before) < f.Conns && time.Now().Before(deadline); {
			if err = pace.Sleep(ctx, 20*time.Millisecond); err == nil { // a bounded poll of the server's client list
				before, err = r.a.conns(ctx)
			}
		}
		if err != nil {
			return err
		}
		start := time.Now()
		prev := r.user
		if err := r.next(ctx); err != nil {
			return err
		}
		left := 0
		for deadline := start.Add(o.authWait); ; {
			conns, err := r.a.conns(ctx)
			if err != nil {
				return err
			}
			if left = stale(conns, r.user); left == 0 {
				if inPlace(before, conns, r.user) {
					f.InPlace++
				}
				f.Switch = append(f.Switch, time.Since(start))
				break
			}
			if time.Now().After(deadline) {
				f.Switch = append(f.Switch, -1)
				break
			}
			if err := pace.Sleep(ctx, 20*time.Millisecond); err != nil { // a bounded poll of the server's client list
				return err
			}
		}
		f.Stale += left
		if _, err := r.a.do(ctx, "ACL", "DELUSER", prev); err != nil {
			return fmt.Errorf("ACL DELUSER %s: %w", prev, err)
		}
		f.Steps++
		if err := pace.Sleep(ctx, time.Until(start.Add(o.every))); err != nil { // pacing of the rotations
			return err
		}
	}
	return nil
}

// renew replaces the server's certificate and the client's, o.renewals
// times.
func renew(ctx context.Context, o *options, a *admin, cs *certSource, f *figures) error {
	for range o.renewals {
		start := time.Now()
		if _, err := a.srv.RenewServerCertificate(ctx); err != nil {
			return fmt.Errorf("renewing the server's certificate: %w", err)
		}
		a.opened.Add(1) // RenewServerCertificate's CONFIG SET, on a connection of its own (testbed's Do)
		cert, err := a.srv.ClientCertificate()
		if err != nil {
			return err
		}
		cs.cur.Store(&cert)
		f.Steps++
		if err := pace.Sleep(ctx, time.Until(start.Add(o.every))); err != nil { // pacing of the renewals
			return err
		}
	}
	return nil
}

func logOutcome(oc outcome) {
	if oc.err != nil {
		fmt.Fprintf(os.Stderr, "[%s round %d] %-30s FAIL %v\n", oc.scenario, oc.round, oc.client.label, oc.err)
		return
	}
	f := oc.fig
	fmt.Fprintf(os.Stderr, "[%s round %d] %-30s %d steps (%d in place, %d stale), %d ok, %d failed %v, %d reconnects (%d conns → %d, %d closed), %d handshakes, %.1f kops/s, window %v, %d wrong\n",
		oc.scenario, oc.round, oc.client.label, f.Steps, f.InPlace, f.Stale, f.OK, f.Failed, f.Errors, f.Reconnects, f.Conns, f.ConnsEnd,
		f.Closed, f.Handshakes, f.OpsPerSec/1000, f.Window, f.Wrong)
}
