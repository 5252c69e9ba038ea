package zipline

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// This file sets connections up: the pipe's options from the Client's, the
// dialer, the hello and the set-up commands every kind of connection sends
// on each reconnect. connect.go decides which carrier a Client gets.

// appendCommandStrings encodes a command of plain string arguments.
func appendCommandStrings(dst []byte, args ...string) []byte {
	dst = resp.AppendArrayLen(dst, len(args))
	for _, a := range args {
		dst = resp.AppendBulkString(dst, a)
	}
	return dst
}

// pipeOptions are the settings of every connection to addr. On a cluster,
// connections fail fast while down (the router waits for the next topology
// instead of a reconnect), and send READONLY when reads may go to replicas.
func (s *shared) pipeOptions(addr string) pipe.Options {
	o := s.opts
	var onConnect func(*pipe.Setup) error
	if s.commandTable() != nil {
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
		Credentials:         s.credentialSet(),
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

// credentialSet is the pipes' source of credentials that change, or nil.
func (s *shared) credentialSet() *pipe.Credentials {
	if s.creds == nil {
		return nil
	}
	return s.creds.set
}
