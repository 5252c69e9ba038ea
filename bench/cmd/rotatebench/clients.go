package main

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/auth"
	"github.com/ziplinekv/zipline"
)

// clientName is the name every client under test gives its connections
// (CLIENT SETNAME), by which CLIENT LIST tells them from the bench's own.
const clientName = "rotatebench"

// target is what a client connects to in one run: the address, and the
// rotating credentials (scenario credentials) or the TLS configuration
// with its renewed client certificate (scenario certificates).
type target struct {
	addr  string
	creds *rotating   // nil without credentials
	tls   *tls.Config // nil without TLS
}

// clientDef is one client: how it connects, and how the report names and
// describes it.
type clientDef struct {
	name  string // for -clients
	label string // in the report
	desc  string
	// credentialsOnly: the client is a way of taking credentials, and has
	// no part in the certificates scenario.
	credentialsOnly bool
	connect         func(ctx context.Context, t target) (setget.Store, error)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// quietRedis silences go-redis's process-wide logger, as quiet does
// zipline's: under a rotation its pool logs every connection its re-auth
// hook turns away, hundreds a second.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietRedis{}) }

var clientDefs = []clientDef{
	{
		name: "zipline", label: "zipline",
		desc: "`zipline.New(zipline.Options{Addr, ClientName, Credentials: provider, TLSConfig})`, the provider " +
			"returning `zipline.Credentials{Username, Password, Expires}` with Expires a set time ahead (`-expires`), " +
			"so that the client authenticates its open connections again in place before then; every other " +
			"option at its default (logger silenced); `Set`, `Get`",
		connect: func(ctx context.Context, t target) (setget.Store, error) {
			o := zipline.Options{Addr: t.addr, ClientName: clientName, TLSConfig: t.tls, Logger: quiet}
			if t.creds != nil {
				o.Credentials = t.creds.zipline
			}
			c, err := zipline.New(o)
			if err != nil {
				return nil, err
			}
			if err := c.Ping(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return setget.ZiplineStore{C: c}, nil
		},
	},
	{
		name: "zipline-push", label: "zipline (RenewCredentials)", credentialsOnly: true,
		desc: "as zipline, with credentials that do not expire (no `Expires`), each rotation followed by " +
			"`Client.RenewCredentials(ctx)`: the application pushes the change, as go-redis's streaming provider does",
		connect: func(ctx context.Context, t target) (setget.Store, error) {
			c, err := zipline.New(zipline.Options{Addr: t.addr, ClientName: clientName, Logger: quiet, Credentials: t.creds.static})
			if err != nil {
				return nil, err
			}
			if err := c.Ping(ctx); err != nil {
				c.Close()
				return nil, err
			}
			t.creds.onSet(func() { c.RenewCredentials(context.Background()) })
			return setget.ZiplineStore{C: c}, nil
		},
	},
	{
		name: "go-redis", label: "go-redis",
		desc: "`redis.NewClient(&redis.Options{Addr, ClientName, StreamingCredentialsProvider: provider, TLSConfig})` " +
			"(v9.23.0), the provider an `auth.StreamingCredentialsProvider` whose Subscribe returns the current " +
			"credentials and keeps the listener, each rotation pushing the new ones to every listener (`OnNext`), " +
			"which marks that connection for AUTH in place; every other option at its default (pool of 10 × " +
			"GOMAXPROCS, 3 retries; logger silenced with `redis.SetLogger`); `Set(ctx, k, v, 0)`, `Get(ctx, k)`",
		connect: func(ctx context.Context, t target) (setget.Store, error) {
			o := &redis.Options{Addr: t.addr, ClientName: clientName, TLSConfig: t.tls}
			if t.creds != nil {
				o.StreamingCredentialsProvider = t.creds
			}
			return setget.GoRedis(ctx, redis.NewClient(o))
		},
	},
	{
		name: "go-redis-plain", label: "go-redis (CredentialsProvider)", credentialsOnly: true,
		desc: "as go-redis, with `Options.CredentialsProvider: func() (username, password string)` instead, which " +
			"go-redis calls for each new connection only: the way most go-redis users take changing credentials",
		connect: func(ctx context.Context, t target) (setget.Store, error) {
			return setget.GoRedis(ctx, redis.NewClient(&redis.Options{Addr: t.addr, ClientName: clientName, CredentialsProvider: t.creds.plain}))
		},
	},
}

func (d clientDef) String() string { return d.name }

// applies reports whether d takes part in a scenario.
func (d clientDef) applies(scenario string) bool {
	return scenario == "credentials" || !d.credentialsOnly
}

// rotating holds the current ACL user and password, and hands them out in
// each client's way: zipline's provider func, go-redis's streaming
// provider (which pushes every change to the connections subscribed) and
// go-redis's plain provider func.
type rotating struct {
	life time.Duration // how far ahead zipline's Expires is

	mu         sync.Mutex
	user, pass string
	listeners  map[auth.CredentialsListener]struct{}
	pushes     []func() // called after each change (zipline's RenewCredentials)
}

// onSet has push called after every change of the credentials.
func (r *rotating) onSet(push func()) {
	r.mu.Lock()
	r.pushes = append(r.pushes, push)
	r.mu.Unlock()
}

// static is zipline's provider without an expiry: the application pushes
// changes with RenewCredentials.
func (r *rotating) static(context.Context) (zipline.Credentials, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return zipline.Credentials{Username: r.user, Password: r.pass}, nil
}

func newRotating(life time.Duration) *rotating {
	return &rotating{life: life, listeners: map[auth.CredentialsListener]struct{}{}}
}

// set makes user and pass the current credentials and pushes them to
// go-redis's listeners. A listener subscribing meanwhile either is pushed
// to or gets the new credentials from Subscribe.
func (r *rotating) set(user, pass string) {
	r.mu.Lock()
	r.user, r.pass = user, pass
	ls := slices.Collect(maps.Keys(r.listeners))
	pushes := slices.Clone(r.pushes)
	r.mu.Unlock()
	c := auth.NewBasicCredentials(user, pass)
	for _, l := range ls {
		l.OnNext(c)
	}
	for _, push := range pushes {
		push()
	}
}

func (r *rotating) zipline(context.Context) (zipline.Credentials, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return zipline.Credentials{Username: r.user, Password: r.pass, Expires: time.Now().Add(r.life)}, nil
}

func (r *rotating) plain() (string, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.user, r.pass
}

// Subscribe is auth.StreamingCredentialsProvider's: the current
// credentials, and the listener kept (once, however often it subscribes)
// until unsubscribed.
func (r *rotating) Subscribe(l auth.CredentialsListener) (auth.Credentials, auth.UnsubscribeFunc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners[l] = struct{}{}
	unsubscribe := func() error {
		r.mu.Lock()
		delete(r.listeners, l)
		r.mu.Unlock()
		return nil
	}
	return auth.NewBasicCredentials(r.user, r.pass), unsubscribe, nil
}

var _ auth.StreamingCredentialsProvider = (*rotating)(nil)

// certSource is the client certificate the clients present: each renewal
// stores a new one, which handshakes from then on present.
type certSource struct {
	cur        atomic.Pointer[tls.Certificate]
	handshakes atomic.Int64 // handshakes that asked for it
}

// config is the TLS configuration both clients get: the server's CA, and
// the client certificate read at every handshake.
func (cs *certSource) config(roots *tls.Config) *tls.Config {
	return &tls.Config{
		RootCAs:    roots.RootCAs,
		MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cs.handshakes.Add(1)
			return cs.cur.Load(), nil
		},
	}
}
