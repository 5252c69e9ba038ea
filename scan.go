package zipline

import (
	"context"
	"iter"
)

// ScanOptions filter a SCAN-family iteration. The zero value visits
// everything, letting the server pick the page size.
type ScanOptions struct {
	// Match is a glob pattern the server applies to each key (or field or
	// member), after paging: a page may come back empty.
	Match string
	// Count hints how many items the server examines per page.
	Count int64
	// Type limits SCAN to keys of one type ("string", "hash", ...).
	Type string

	noValues bool // HSCAN ... NOVALUES (HScanFields)
}

func (o ScanOptions) appendTo(args []arg, withType bool) []arg {
	if o.Match != "" {
		args = append(args, str("MATCH"), str(o.Match))
	}
	if o.Count > 0 {
		args = append(args, str("COUNT"), num(o.Count))
	}
	if withType && o.Type != "" {
		args = append(args, str("TYPE"), str(o.Type))
	}
	if o.noValues {
		args = append(args, str("NOVALUES"))
	}
	return args
}

// scan walks a SCAN-family cursor to the end, yielding each page's items,
// until yield returns false. As SCAN guarantees, an item present for the
// whole iteration is returned at least once; it may be returned more than
// once. On a cluster, SCAN walks every primary in turn (SSCAN and the
// others concern one key, which lives in one slot).
func (c *Client) scan(ctx context.Context, spec *commandSpec, key string, opts ScanOptions, yield func([]Value) bool) error {
	targets := []*Client{c}
	if spec == specSCAN { // the keyspace, not one key's (whose name may be "")
		targets = c.shards(false)
	}
	for _, t := range targets {
		more, err := t.scanCursor(ctx, spec, key, opts, yield)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// scanCursor walks one server's cursor; more is false once yield said stop.
func (c *Client) scanCursor(ctx context.Context, spec *commandSpec, key string, opts ScanOptions, yield func([]Value) bool) (more bool, err error) {
	cursor := "0"
	for {
		var buf [9]arg
		args := buf[:0]
		if spec != specSCAN {
			args = append(args, keyArg(key))
		}
		args = append(args, str(cursor))
		args = opts.appendTo(args, spec == specSCAN)
		page, err := run(ctx, c, define(decScan, spec, args...))
		if err != nil {
			return false, err
		}
		if !yield(wrapValues(page.items)) {
			return false, nil
		}
		if cursor = page.cursor; cursor == "0" {
			return true, nil
		}
	}
}

// Scan iterates over the keys of the database with SCAN:
//
//	for key, err := range c.Scan(ctx, zipline.ScanOptions{Match: "user:*"}) {
//		if err != nil { ... }
//	}
//
// An error ends the iteration after being yielded once.
func (c *Client) Scan(ctx context.Context, opts ScanOptions) iter.Seq2[string, error] {
	return c.scanStrings(ctx, specSCAN, "", opts)
}

// SScan iterates over the members of a set.
func (c *Client) SScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[string, error] {
	return c.scanStrings(ctx, specSSCAN, key, opts)
}

func (c *Client) scanStrings(ctx context.Context, spec *commandSpec, key string, opts ScanOptions) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var stopped bool
		err := c.scan(ctx, spec, key, opts, func(items []Value) bool {
			for _, it := range items {
				s, _ := it.AsString()
				if !yield(s, nil) {
					stopped = true
					return false
				}
			}
			return true
		})
		if err != nil && !stopped {
			yield("", err)
		}
	}
}

// HScan iterates over the fields and values of a hash. With
// Compression.Families including Hashes, values are expanded as HGET's are.
func (c *Client) HScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[FieldValue, error] {
	return func(yield func(FieldValue, error) bool) {
		var stopped bool
		err := c.scan(ctx, specHSCAN, key, opts, func(items []Value) bool {
			for i := 0; i+1 < len(items); i += 2 {
				f, _ := items[i].AsString()
				v, _ := items[i+1].AsBytes()
				if !yield(FieldValue{Field: f, Value: v}, nil) {
					stopped = true
					return false
				}
			}
			return true
		})
		if err != nil && !stopped {
			yield(FieldValue{}, err)
		}
	}
}

// ZScan iterates over the members and scores of a sorted set.
func (c *Client) ZScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[Z, error] {
	return func(yield func(Z, error) bool) {
		var stopped bool
		err := c.scan(ctx, specZSCAN, key, opts, func(items []Value) bool {
			for i := 0; i+1 < len(items); i += 2 {
				z, err := pairToZ(items[i].v, items[i+1].v)
				if !yield(z, err) {
					stopped = true
					return false
				}
			}
			return true
		})
		if err != nil && !stopped {
			yield(Z{}, err)
		}
	}
}

// HScanFields iterates over the field names of a hash, without their
// values (HSCAN ... NOVALUES: Redis 7.4, Valkey 8.0).
func (c *Client) HScanFields(ctx context.Context, key string, opts ScanOptions) iter.Seq2[string, error] {
	opts.noValues = true
	return c.scanStrings(ctx, specHSCAN, key, opts)
}
