// Package rollout counts the compressed values under a key pattern and
// rewrites them plain: what an operator checks before and after each step
// of turning compression on or off in a fleet whose services share keys
// ("zipline inspect -match", "zipline migrate -decompress -match"; the
// README's "Rolling compression out").
//
// Both read values as stored (the Client's Raw view) and never hold more
// than one page of keys.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/pace"
)

// Options bound a pass.
type Options struct {
	// Rate is keys per second at most; 0 is no limit.
	Rate int
	// Batch is keys read per round trip; 0 is 100.
	Batch int
	// Progress, if set, is called after each page with the keys scanned.
	Progress func(scanned int64)
}

// Counts is what a pass found under the pattern.
type Counts struct {
	Keys                                 int64 // keys scanned
	Strings, StringsCompressed           int64
	HashFields, HashFieldsCompressed     int64
	ListElements, ListElementsCompressed int64
	// Backends counts the compressed values by how they were written:
	// "zstd", "lz4", "zstd with a dictionary".
	Backends map[string]int64
}

// Compressed is every compressed value counted.
func (c Counts) Compressed() int64 {
	return c.StringsCompressed + c.HashFieldsCompressed + c.ListElementsCompressed
}

func (c *Counts) value(b []byte) bool {
	if !codec.IsCompressed(b) {
		return false
	}
	if c.Backends == nil {
		c.Backends = map[string]int64{}
	}
	c.Backends[backendOf(b)]++
	return true
}

// backendOf names how an envelope was written.
func backendOf(b []byte) string {
	if _, ok := codec.DictionaryOf(b); ok {
		return "zstd with a dictionary"
	}
	switch codec.Backend(b[4]) {
	case codec.Zstd:
		return "zstd"
	case codec.LZ4:
		return "lz4"
	}
	return fmt.Sprintf("backend %d", b[4])
}

// Count counts the values under the keys match selects (a SCAN MATCH
// pattern), stored plain and compressed: strings, hash fields and list
// elements. Sets, sorted sets and streams hold no compressed values and are
// counted as keys only.
func Count(ctx context.Context, c *zipline.Client, match string, o Options) (Counts, error) {
	raw := c.Raw()
	var n Counts
	err := pages(ctx, raw, match, o, func(keys []string, types []string) error {
		n.Keys += int64(len(keys))
		gets, err := readStrings(ctx, raw, keys, types)
		if err != nil {
			return err
		}
		for i := range keys {
			if gets[i] == nil {
				continue
			}
			if v, err := gets[i].Result(); err == nil {
				n.Strings++
				if n.value(v) {
					n.StringsCompressed++
				}
			}
		}
		return n.collections(ctx, raw, keys, types)
	})
	return n, err
}

// readStrings GETs the strings among keys in one batch: the futures of the
// others are nil.
func readStrings(ctx context.Context, raw *zipline.Client, keys, types []string) ([]*zipline.Future[[]byte], error) {
	b := raw.Batch()
	gets := make([]*zipline.Future[[]byte], len(keys))
	for i, k := range keys {
		if types[i] == "string" {
			gets[i] = b.Get(k)
		}
	}
	if err := b.Exec(ctx); err != nil && !errors.Is(err, zipline.Nil) {
		return nil, err
	}
	return gets, nil
}

// collections counts the values of the hashes and lists among keys.
func (n *Counts) collections(ctx context.Context, raw *zipline.Client, keys, types []string) error {
	for i, k := range keys {
		switch types[i] {
		case "hash":
			for fv, err := range raw.HScan(ctx, k, zipline.ScanOptions{Count: 500}) {
				if err != nil {
					return err
				}
				n.HashFields++
				if n.value(fv.Value) {
					n.HashFieldsCompressed++
				}
			}
		case "list":
			for start := int64(0); ; start += 500 {
				vs, err := raw.LRange(ctx, k, start, start+499)
				if err != nil {
					return err
				}
				for _, v := range vs {
					n.ListElements++
					if n.value(v) {
						n.ListElementsCompressed++
					}
				}
				if len(vs) < 500 {
					break
				}
			}
		}
	}
	return nil
}

// Rewritten is what Decompress did.
type Rewritten struct {
	Counts
	// Plain counts the strings rewritten plain.
	Plain int64
	// Changed counts the strings that changed between read and rewrite,
	// left as they are: run again (once no writer compresses) for them.
	Changed int64
	// Left counts the compressed values Decompress does not rewrite: hash
	// fields and list elements (read and write them through a Client with
	// Compression.WritePlain), and values written with a dictionary, which
	// it cannot expand.
	Left int64
}

// rewritePlain replaces a string with its plaintext only if it still holds
// the envelope that was read, keeping its time to live: a value written
// since, or deleted, is left alone.
var rewritePlain = zipline.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
	return 1
end
return 0`)

// Decompress rewrites plain the compressed strings under the keys match
// selects, each only if unchanged since it was read, keeping its TTL. Run
// it once no writer compresses (every Client with Compression.WritePlain,
// or without compression) and every reader expands; run it again until
// Changed is 0. It counts hash fields and list elements as Count does
// without rewriting them.
func Decompress(ctx context.Context, c *zipline.Client, match string, o Options) (Rewritten, error) {
	raw := c.Raw()
	dec, err := codec.New(codec.Zstd) // expands either backend's envelope
	if err != nil {
		return Rewritten{}, err
	}
	var r Rewritten
	err = pages(ctx, raw, match, o, func(keys []string, types []string) error {
		gets, err := readStrings(ctx, raw, keys, types)
		if err != nil {
			return err
		}
		w := raw.Batch()
		var sets []*zipline.Future[zipline.Value]
		for i, k := range keys {
			if types[i] != "string" {
				continue
			}
			v, err := gets[i].Result()
			if err != nil {
				continue // gone since the scan
			}
			r.Keys++
			r.Strings++
			if !r.value(v) {
				continue
			}
			r.StringsCompressed++
			plain, err := dec.Decode(nil, v)
			if err != nil {
				r.Left++ // written with a dictionary this pass does not have, or corrupt
				continue
			}
			sets = append(sets, rewritePlain.Queue(w, []string{k}, v, plain))
		}
		if w.Len() > 0 {
			if err := w.Exec(ctx); err != nil {
				return err
			}
		}
		for _, f := range sets {
			if n, _ := f.Val().AsInt64(); n == 1 {
				r.Plain++
			} else {
				r.Changed++
			}
		}
		// Hashes and lists: counted, not rewritten.
		before := r.HashFieldsCompressed + r.ListElementsCompressed
		for _, t := range types {
			if t != "string" {
				r.Keys++
			}
		}
		if err := r.collections(ctx, raw, keys, types); err != nil {
			return err
		}
		r.Left += r.HashFieldsCompressed + r.ListElementsCompressed - before
		return nil
	})
	return r, err
}

// pages scans the keys match selects, a page at a time, with their types,
// at o.Rate keys a second at most.
func pages(ctx context.Context, c *zipline.Client, match string, o Options, page func(keys, types []string) error) error {
	batch := o.Batch
	if batch <= 0 {
		batch = 100
	}
	start := time.Now()
	var scanned int64
	var keys []string
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		b := c.Batch()
		types := make([]*zipline.Future[string], len(keys))
		for i, k := range keys {
			types[i] = b.Type(k)
		}
		if err := b.Exec(ctx); err != nil {
			return err
		}
		names := make([]string, len(keys))
		for i := range keys {
			names[i] = types[i].Val()
		}
		if err := page(keys, names); err != nil {
			return err
		}
		scanned += int64(len(keys))
		keys = keys[:0]
		if o.Progress != nil {
			o.Progress(scanned)
		}
		return pace.Rate(ctx, start, scanned, o.Rate)
	}
	for k, err := range c.Scan(ctx, zipline.ScanOptions{Match: match, Count: int64(batch)}) {
		if err != nil {
			return err
		}
		keys = append(keys, k)
		if len(keys) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
