package zipline

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Script is a Lua script that runs by its SHA1 digest (EVALSHA), sending
// its source (EVAL) only when the server does not have it cached yet.
// Create it once and reuse it; it is safe for concurrent use.
type Script struct {
	src string
	sha string
}

// NewScript returns a Script for the Lua source src.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{src: src, sha: hex.EncodeToString(sum[:])}
}

// SHA1 returns the script's digest, as EVALSHA and SCRIPT EXISTS take it.
func (s *Script) SHA1() string { return s.sha }

// Run runs the script with keys and args. The first time on a server, the
// EVALSHA fails with NOSCRIPT and Run sends the source with EVAL, which also
// caches it for the next call.
func (s *Script) Run(ctx context.Context, c *Client, keys []string, args ...any) (Value, error) {
	v, err := s.eval(ctx, c, "EVALSHA", s.sha, keys, args)
	if isServerError(err, "NOSCRIPT") {
		v, err = s.eval(ctx, c, "EVAL", s.src, keys, args)
	}
	return v, err
}

// Load caches the script on the server (SCRIPT LOAD), so that the first
// Run needs no fallback.
func (s *Script) Load(ctx context.Context, c *Client) error {
	_, err := do(ctx, c, decString, "SCRIPT", str("LOAD"), str(s.src))
	return err
}

func (s *Script) eval(ctx context.Context, c *Client, cmd, body string, keys []string, args []any) (Value, error) {
	call := c.pipe.NewCall()
	call.Buf = resp.AppendArrayLen(call.Buf, 3+len(keys)+len(args))
	call.Buf = resp.AppendBulkString(call.Buf, cmd)
	call.Buf = resp.AppendBulkString(call.Buf, body)
	call.Buf = resp.AppendBulkInt(call.Buf, int64(len(keys)))
	for _, k := range keys {
		call.Buf = resp.AppendBulkString(call.Buf, k)
	}
	for i, a := range args {
		var err error
		if call.Buf, err = resp.AppendAny(call.Buf, 3+len(keys)+i, a); err != nil {
			call.Release()
			return Value{}, fmt.Errorf("zipline: %s: %w", cmd, err)
		}
	}
	v, err := c.send(ctx, call, cmd, false)
	return Value{v}, err
}
