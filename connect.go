package zipline

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// This file makes a Client's carriers: it reaches the servers, tells a
// cluster from one server, and sets every connection up (dialing, TLS,
// HELLO, and what each kind of connection needs on every reconnect).

// connect reaches the first seed that answers and, unless Options.Cluster
// says otherwise, asks it whether it is part of a cluster: then the Client
// discovers the cluster from it; else it talks to that one server.
func (s *shared) connect() (carrier, error) {
	seeds := s.opts.Addrs
	if len(seeds) == 0 {
		seeds = []string{s.opts.Addr}
	}
	var errs []error
	for _, addr := range seeds {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.DialTimeout)
		d, err := newDirect(s, addr, ctx)
		if err != nil {
			cancel()
			errs = append(errs, err)
			continue
		}
		mode := s.opts.Cluster
		if mode == ClusterAuto {
			mode = ClusterOff
			if clusterEnabled(ctx, d) {
				mode = ClusterOn
			}
		}
		s.server = versionOf(d.pipe.Server())
		if mode == ClusterOff {
			cancel()
			return d, nil
		}
		// A cluster's connections are set up differently (see
		// pipeOptions): start again with those.
		d.close()
		s.routing = serverCommands{}
		if s.cache != nil {
			s.cache.slots = make([]atomic.Uint32, slotCount)
		}
		c, err := newCluster(ctx, s, addr, seeds)
		cancel()
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, errors.Join(errs...)
}

// versionOf reads what a server said it is; a server of a kind the spec
// was not read from counts as unknown.
func versionOf(p pipe.Server) serverVersion {
	switch p.Name {
	case "redis":
		return serverVersion{kind: serverRedis, version: p.Version}
	case "valkey":
		return serverVersion{kind: serverValkey, version: p.Version}
	}
	return serverVersion{}
}

// clusterEnabled asks a server whether it is a cluster node. It is the
// Client's own set-up, so it goes straight to the connection, past hooks.
func clusterEnabled(ctx context.Context, d *direct) bool {
	c := d.pipe.NewCall()
	c.Buf = appendCommandStrings(c.Buf, "INFO", "cluster")
	c.N = 1
	if err := d.pipe.Do(ctx, c); err != nil {
		return false
	}
	defer c.Release()
	return strings.Contains(string(c.Reply(0).Bytes()), "cluster_enabled:1")
}

// appendCommandStrings encodes a command of plain string arguments.
func appendCommandStrings(dst []byte, args ...string) []byte {
	dst = resp.AppendArrayLen(dst, len(args))
	for _, a := range args {
		dst = resp.AppendBulkString(dst, a)
	}
	return dst
}

// newDirect connects to one server. With the client-side cache on, its
// shared connection tracks the keys read through it (and only that one:
// dedicated connections do not).
func newDirect(s *shared, addr string, ctx context.Context) (*direct, error) {
	po := s.pipeOptions(addr)
	dedicated := po
	var tc *trackedConn
	if s.cache != nil {
		tc = s.cache.track(&po)
	}
	p, err := pipe.New(ctx, po)
	if err != nil {
		return nil, connectError(addr, err)
	}
	if tc != nil {
		tc.attach(p)
	}
	return &direct{addr: addr, pipe: p, dedicated: newDedicatedPool(s, dedicated, addr), tracked: tc}, nil
}

// pipeOptions are the settings of every connection to addr. On a cluster,
// connections fail fast while down (the router waits for the next topology
// instead of a reconnect), and send READONLY when reads may go to replicas.
func (s *shared) pipeOptions(addr string) pipe.Options {
	o := s.opts
	var onConnect func(*pipe.Setup) error
	if s.routing != nil {
		o.WaitForReconnect = false
		if o.ReadFrom != ReadPrimary {
			onConnect = func(su *pipe.Setup) error {
				_, err := su.Do("READONLY") // an error reply (a primary's) is harmless
				return err
			}
		}
	}
	return pipe.Options{
		OnConnect:           onConnect,
		Dial:                s.dialer(addr),
		Protocol:            o.Protocol,
		Username:            o.Username,
		Password:            o.Password,
		DB:                  o.DB,
		ClientName:          o.ClientName,
		HandshakeTimeout:    o.DialTimeout,
		IOTimeout:           o.IOTimeout,
		HealthCheckInterval: o.HealthCheckInterval,
		MaxFlushDelay:       o.MaxFlushDelay,
		ReconnectBackoffMin: o.ReconnectBackoffMin,
		ReconnectBackoffMax: o.ReconnectBackoffMax,
		WaitForReconnect:    o.WaitForReconnect,
		MaxPendingBytes:     o.MaxPendingBytes,
		FailWhenPendingFull: o.FailWhenPendingFull,
		Limits:              s.limits,
		Logger:              o.Logger.With("addr", addr),
		Calls:               s.calls,
	}
}

// connectError turns a failed set-up into an error that says where, and
// exposes a refused HELLO/AUTH as a *ServerError.
func connectError(addr string, err error) error {
	var he *pipe.HandshakeError
	if errors.As(err, &he) && he.Reply.IsError() {
		return fmt.Errorf("zipline: connect %s: %s: %w", addr, he.Command, serverError(he.Reply))
	}
	return fmt.Errorf("zipline: connect %s: %w", addr, err)
}

// dialer opens connections to addr: TCP (or a unix socket), then TLS when
// configured, through the dial hooks.
func (s *shared) dialer(addr string) func(ctx context.Context) (net.Conn, error) {
	o := s.opts
	dial := o.Dialer
	if dial == nil {
		d := &net.Dialer{KeepAlive: 15 * time.Second}
		dial = d.DialContext
	}
	base := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil || o.TLSConfig == nil {
			return c, err
		}
		cfg := o.TLSConfig
		if cfg.ServerName == "" && strings.HasPrefix(network, "tcp") {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
	hooked := s.hooks.dial(base)
	return func(ctx context.Context) (net.Conn, error) { return hooked(ctx, o.Network, addr) }
}
