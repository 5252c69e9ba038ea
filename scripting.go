package zipline

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
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

// Run runs the script with keys and args (encoded as Client.Do encodes
// them). The first time on a server, the EVALSHA fails with NOSCRIPT and
// Run sends the source with EVAL, which also caches it for the next call.
// Every key the script touches must be in keys: that is how it is routed.
func (s *Script) Run(ctx context.Context, c *Client, keys []string, args ...any) (Value, error) {
	cm, err := s.command(specEVALSHA, s.sha, keys, args)
	if err != nil {
		return Value{}, err
	}
	v, err := run(ctx, c, cm)
	if isServerError(err, "NOSCRIPT") {
		cm.args[0] = str(s.src)
		cm.spec = specEVAL
		v, err = run(ctx, c, cm)
	}
	return v, err
}

// Queue queues the script in a Batch, as EVAL: a batch cannot fall back
// from EVALSHA in the middle of its round trip, so it sends the source.
func (s *Script) Queue(b *Batch, keys []string, args ...any) *Future[Value] {
	cm, err := s.command(specEVAL, s.src, keys, args)
	cm.dec = decValue
	return enqueueChecked(b, cm, err)
}

// Load caches the script on the server (SCRIPT LOAD), so that the first
// Run needs no fallback; on a cluster, on every primary.
func (s *Script) Load(ctx context.Context, c *Client) error {
	for _, sh := range c.shards() {
		if _, err := run(ctx, sh, cmd(decString, specSCRIPT_LOAD, str(s.src))); err != nil {
			return err
		}
	}
	return nil
}

func (s *Script) command(spec *commandSpec, body string, keys []string, args []any) (command[Value], error) {
	cargs := make([]arg, 0, 2+len(keys)+len(args))
	cargs = append(cargs, str(body), num(int64(len(keys))))
	cargs = append(cargs, keyArgs(keys)...)
	for i, a := range args {
		ca, err := anyArg(2+len(keys)+i, a)
		if err != nil {
			return command[Value]{}, fmt.Errorf("zipline: %s: %w", spec.name, err)
		}
		cargs = append(cargs, ca)
	}
	return cmd(decValue, spec, cargs...), nil
}
