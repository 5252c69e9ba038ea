package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/rollout"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// cmdInspect is "zipline inspect".
var cmdInspect = &command{
	name:     "inspect",
	summary:  "show what is stored under keys: type, encoding, memory, TTL, compression, the plaintext",
	synopsis: "[-url URL | -addr host:port] [-namespace SPEC] KEY... | -match PATTERN",
	doc: `Shows what is stored under each KEY (stored names, as SCAN lists them): its type, encoding,
memory, TTL, and, for strings and hash fields, whether the value is a GLIDE envelope
(backend, sizes, ratio) or a frame written with a dictionary (which one), and the
plaintext, truncated. With -namespace (codec=dict), values written with the namespace's
dictionaries are read too. With -match PATTERN instead of keys, it counts the values under
every key the pattern matches (strings, hash fields, list elements), plain and compressed,
by backend: the check before and after each step of rolling compression out (README,
"Rolling compression out"). It only reads.`,
	flags:    inspectFlags,
	operands: true,
}

func inspectFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	common := addDictFlags(fs)
	show := fs.Int("show", 200, "bytes of each plaintext shown")
	fields := fs.Int("fields", 10, "fields or elements shown of a hash, list, set or sorted set")
	match := fs.String("match", "", "count the plain and compressed values under the keys this `PATTERN` (as SCAN MATCH) selects")
	rate := fs.Int("rate", 20000, "with -match: keys scanned per second at most (0: no limit)")
	quiet := quietFlag(fs)
	return func(ctx context.Context, _ []string) error {
		keys := fs.Args()
		switch {
		case *match != "" && len(keys) > 0:
			return usagef("inspect takes KEYs or -match, not both")
		case *match == "" && len(keys) == 0:
			return usagef("inspect needs at least one KEY, or -match PATTERN")
		}
		opts, err := common.server.options()
		if err != nil {
			return err
		}
		c, err := zipline.New(withCredentials(opts, *common.user, *common.password))
		if err != nil {
			return err
		}
		defer c.Close()
		if *match != "" {
			bar := newProgress(os.Stderr, "keys", *quiet)
			n, err := rollout.Count(ctx, c, *match, rollout.Options{Rate: *rate,
				Progress: func(scanned int64) { bar.update(scanned, 0, -1) }})
			bar.finish()
			if err != nil {
				return err
			}
			printCounts(os.Stdout, *match, n)
			return nil
		}
		in := inspector{c: c.Raw(), out: os.Stdout, show: *show, fields: *fields}
		if *common.namespace != "" {
			ns, err := parseNamespace(*common.namespace)
			if err != nil {
				return usagef("-namespace: %w", err)
			}
			if in.store, err = layout.New(ctx, c, ns); err != nil {
				return err
			}
		}
		for _, k := range keys {
			if err := in.key(ctx, k); err != nil {
				return err
			}
		}
		return nil
	}
}

// inspector prints what is stored.
type inspector struct {
	c      *zipline.Client // Raw: values as stored
	out    io.Writer
	store  *layout.Store // reads dictionary frames, when a namespace is given
	show   int
	fields int
}

func (in inspector) key(ctx context.Context, key string) error {
	typ, err := in.c.Type(ctx, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(in.out, "%s\n", strconv.Quote(key))
	if typ == "none" {
		fmt.Fprintf(in.out, "  (no such key)\n")
		return nil
	}
	enc, _ := in.c.ObjectEncoding(ctx, key)
	mem, _ := in.c.MemoryUsage(ctx, key, 0)
	ttl, _ := in.c.PTTL(ctx, key)
	ttlText := "none"
	if ttl >= 0 {
		ttlText = ttl.String()
	}
	fmt.Fprintf(in.out, "  type %s, encoding %s, memory %d B, TTL %s\n", typ, enc, mem, ttlText)
	switch typ {
	case "string":
		v, err := in.c.Get(ctx, key)
		if err != nil {
			return err
		}
		in.value("  ", v)
	case "hash":
		n := 0
		for fv, err := range in.c.HScan(ctx, key, zipline.ScanOptions{Count: 100}) {
			if err != nil {
				return err
			}
			if n == in.fields {
				fmt.Fprintf(in.out, "  ...\n")
				break
			}
			n++
			fmt.Fprintf(in.out, "  field %s\n", strconv.Quote(fv.Field))
			in.value("    ", fv.Value)
		}
	case "list":
		vs, err := in.c.LRange(ctx, key, 0, int64(in.fields-1))
		if err != nil {
			return err
		}
		for i, v := range vs {
			fmt.Fprintf(in.out, "  [%d]\n", i)
			in.value("    ", v)
		}
	default:
		fmt.Fprintf(in.out, "  (members not shown for a %s)\n", typ)
	}
	return nil
}

// value describes one stored value: an envelope's backend and sizes, a
// dictionary frame's dictionary, and the plaintext.
func (in inspector) value(indent string, v []byte) {
	if !codec.IsCompressed(v) {
		fmt.Fprintf(in.out, "%sraw, %d B: %s\n", indent, len(v), in.preview(v))
		return
	}
	backend := codec.Backend(v[4])
	var plain []byte
	var err error
	id, named := codec.DictionaryOf(v)
	switch {
	case named && in.store != nil:
		plain, err = in.store.DecodeStored(v)
	case named:
		err = errors.New("written with a dictionary: give -namespace to read it")
	default:
		var c *codec.Codec
		if c, err = codec.New(codec.Zstd); err == nil {
			plain, err = c.Decode(nil, v)
		}
	}
	desc := fmt.Sprintf("GLIDE envelope, %s", backend)
	if named {
		desc += fmt.Sprintf(" with dictionary %d", id)
	}
	if err != nil {
		fmt.Fprintf(in.out, "%s%s, %d B stored: %v\n", indent, desc, len(v), err)
		return
	}
	fmt.Fprintf(in.out, "%s%s, %d B stored, %d B plaintext (ratio %.3f): %s\n", indent, desc, len(v), len(plain),
		float64(len(v))/float64(max(len(plain), 1)), in.preview(plain))
}

// preview shows b, truncated: as text when it is UTF-8, else quoted.
func (in inspector) preview(b []byte) string {
	cut := b
	if len(cut) > in.show {
		cut = cut[:in.show]
	}
	s := string(cut)
	if !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\r\n") {
		s = strconv.Quote(s)
	}
	if len(b) > in.show {
		s += fmt.Sprintf(" ... (%d B more)", len(b)-in.show)
	}
	return s
}

// printCounts prints what rollout.Count found under pattern.
func printCounts(w io.Writer, pattern string, n rollout.Counts) {
	fmt.Fprintf(w, "keys matching %q: %d\n", pattern, n.Keys)
	row := func(what string, all, compressed int64) {
		if all > 0 {
			fmt.Fprintf(w, "  %-14s %10d, compressed %d (%.1f %%)\n", what, all, compressed, 100*float64(compressed)/float64(all))
		}
	}
	row("strings", n.Strings, n.StringsCompressed)
	row("hash fields", n.HashFields, n.HashFieldsCompressed)
	row("list elements", n.ListElements, n.ListElementsCompressed)
	backends := make([]string, 0, len(n.Backends))
	for b := range n.Backends {
		backends = append(backends, b)
	}
	sort.Strings(backends)
	for _, b := range backends {
		fmt.Fprintf(w, "  compressed with %s: %d\n", b, n.Backends[b])
	}
	fmt.Fprintf(w, "compressed values: %d\n", n.Compressed())
}
