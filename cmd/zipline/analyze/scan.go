package analyze

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/pace"
)

// Progress reports a running scan.
type Progress struct {
	Scanned int64 // keys scanned so far
	Total   int64 // keys the scan will look at: the key budget, or DBSIZE if smaller
	Elapsed time.Duration
}

// ETA is the time the scan still needs at its rate so far.
func (p Progress) ETA() time.Duration {
	if p.Scanned <= 0 || p.Total <= p.Scanned {
		return 0
	}
	rate := float64(p.Scanned) / max(p.Elapsed.Seconds(), 1e-3)
	return time.Duration(float64(p.Total-p.Scanned) / rate * float64(time.Second))
}

// scanResult is what the scan saw.
type scanResult struct {
	tracker  *tracker
	scanned  int64
	elapsed  time.Duration
	complete bool // every shard was scanned to its end
	// refused names commands the server refused (MEMORY USAGE, OBJECT
	// ENCODING on managed services), each once.
	refused []string
}

// scanKeys scans every shard, at most cfg.Rate keys a second and
// cfg.MaxKeys keys in all (each shard its share, by its DBSIZE), and reads
// each key's TYPE and PTTL, and samples of each pattern in detail.
func scanKeys(ctx context.Context, cfg *Config, srv *Server, cs *conns) (*scanResult, error) {
	res := &scanResult{tracker: newTracker(cfg.Samples, cfg.SampleBytes, cfg.MaxPatterns), complete: true}
	total := min(srv.Keys, cfg.MaxKeys)
	start := time.Now()
	// Pages of about a twentieth of a second's keys, 100 to 1000.
	count := int64(1000)
	if cfg.Rate > 0 {
		count = int64(min(max(cfg.Rate/20, 100), 1000))
	}
	refused := map[string]bool{}
	var lastReport time.Time
	for i, sc := range cs.scanners {
		budget := cfg.MaxKeys
		if srv.Keys > 0 {
			budget = max(cfg.MaxKeys*srv.Shards[i].Keys/srv.Keys, 1)
		}
		var shardScanned int64
		cursor := "0"
		for {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			args := []any{"SCAN", cursor, "COUNT", count}
			if cfg.Match != "" {
				args = append(args, "MATCH", cfg.Match)
			}
			v, err := sc.Do(ctx, args...)
			if err != nil {
				return res, fmt.Errorf("SCAN on %s: %w", srv.Shards[i].Read, err)
			}
			page, err := v.AsSlice()
			if err != nil || len(page) != 2 {
				return res, fmt.Errorf("SCAN on %s: malformed reply", srv.Shards[i].Read)
			}
			cursor, _ = page[0].AsString()
			keys, err := page[1].AsStrings()
			if err != nil {
				return res, fmt.Errorf("SCAN on %s: %w", srv.Shards[i].Read, err)
			}
			if left := budget - shardScanned; int64(len(keys)) > left {
				keys = keys[:left]
			}
			n, err := inspect(ctx, cs.reader, res.tracker, keys, cfg.SampleBytes, refused)
			if err != nil {
				return res, err
			}
			shardScanned += int64(len(keys))
			res.scanned += int64(n)
			if cfg.Progress != nil && time.Since(lastReport) >= 100*time.Millisecond {
				cfg.Progress(Progress{Scanned: res.scanned, Total: total, Elapsed: time.Since(start)})
				lastReport = time.Now()
			}
			if cursor == "0" {
				break
			}
			if shardScanned >= budget {
				res.complete = false
				break
			}
			// Pace the scan: no faster than Rate keys a second on average.
			if err := pace.Rate(ctx, start, res.scanned, cfg.Rate); err != nil {
				return res, err
			}
		}
	}
	res.elapsed = time.Since(start)
	if cfg.Progress != nil {
		cfg.Progress(Progress{Scanned: res.scanned, Total: max(total, res.scanned), Elapsed: res.elapsed})
	}
	for name := range refused {
		res.refused = append(res.refused, name)
	}
	return res, nil
}

// inspect reads what analyze needs of a page of keys, in at most three
// round trips: TYPE, PTTL and STRLEN of each (the census of every string's
// size); then, for the keys its pattern still wants samples of (or their
// size stratum does), MEMORY USAGE and OBJECT ENCODING; then the values of
// those strings, whole or (past a sample's share of the pattern's byte
// budget) their first bytes. It returns how many keys it counted (those
// that still existed).
func inspect(ctx context.Context, c *zipline.Client, t *tracker, keys []string, maxBytes int, refused map[string]bool) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	b := c.Batch()
	types := make([]*zipline.Future[zipline.Value], len(keys))
	ttls := make([]*zipline.Future[zipline.Value], len(keys))
	lens := make([]*zipline.Future[zipline.Value], len(keys))
	for i, k := range keys {
		types[i] = b.Do("TYPE", k)
		ttls[i] = b.Do("PTTL", k)
		lens[i] = b.Do("STRLEN", k) // WRONGTYPE for other types: only strings are counted
	}
	if err := execTolerant(ctx, b); err != nil {
		return 0, err
	}
	type detail struct {
		key      string
		p        *patternStats
		isString bool
		extra    bool // wanted for its size stratum, beyond the pattern's budget
		ttl      time.Duration
		length   int
		mem, enc *zipline.Future[zipline.Value]
		value    *zipline.Future[zipline.Value]
		s        sample
	}
	var details []*detail
	counted := 0
	b = c.Batch()
	type stratumOf struct {
		p *patternStats
		s int
	}
	pending := map[*patternStats]int{} // samples chosen in this page, per pattern
	pendingIn := map[stratumOf]int{}   // and per stratum
	for i, k := range keys {
		typ, err := types[i].Val().AsString()
		if err != nil || typ == "none" {
			continue // gone since SCAN listed it
		}
		ms, _ := ttls[i].Val().AsInt64()
		if ms == -2 {
			continue
		}
		var ttl time.Duration
		if ms > 0 {
			ttl = time.Duration(ms) * time.Millisecond
		}
		counted++
		length := -1
		if typ == "string" {
			if n, err := lens[i].Val().AsInt64(); err == nil {
				length = int(n)
			} // else it changed type between the two: left out of the census
		}
		p := t.add(k, typ, ttl, length)
		so := stratumOf{p, stratum(max(length, 0))}
		wanted, extra := t.wants(p, typ == "string" && length >= 0, max(length, 0), pending[p], pendingIn[so])
		if !wanted {
			continue
		}
		pending[p]++
		if typ == "string" && length >= 0 {
			pendingIn[so]++
		}
		d := &detail{key: k, p: p, isString: typ == "string" && length >= 0, extra: extra, ttl: ttl, length: length}
		if !refused["MEMORY USAGE"] {
			d.mem = b.Do("MEMORY", "USAGE", k)
		}
		if !refused["OBJECT ENCODING"] {
			d.enc = b.Do("OBJECT", "ENCODING", k)
		}
		details = append(details, d)
	}
	if len(details) == 0 {
		return counted, nil
	}
	if err := execTolerant(ctx, b); err != nil {
		return counted, err
	}
	b = c.Batch()
	budget := map[*patternStats]int{}
	pageBytes := 0 // bytes this page will read
	for _, d := range details {
		d.s = sample{key: d.key, ttl: d.ttl}
		if d.mem != nil {
			if refusedCommand(d.mem.Err()) {
				refused["MEMORY USAGE"] = true
			}
			d.s.memUsage, _ = d.mem.Val().AsInt64()
		}
		if d.enc != nil {
			if refusedCommand(d.enc.Err()) {
				refused["OBJECT ENCODING"] = true
			}
			d.s.encoding, _ = d.enc.Val().AsString()
		}
		if !d.isString {
			continue
		}
		d.s.length = d.length
		// A sample for its stratum reads within the scan's budget alone;
		// the others within their pattern's too.
		left := t.maxTotal - t.sampled - pageBytes
		if !d.extra {
			own, ok := budget[d.p]
			if !ok {
				own = t.maxBytes - d.p.sampleBytes
			}
			left = min(left, own)
		}
		if left <= 0 {
			d.isString = false // the budget is spent: counted, not read
			continue
		}
		// A value may take a quarter of its pattern's budget; a larger one
		// is read in part.
		cap := min(left, max(maxBytes/4, 1))
		read := min(d.s.length, cap)
		if d.s.length <= cap {
			d.value = b.Do("GET", d.key)
		} else {
			d.value = b.Do("GETRANGE", d.key, 0, cap-1)
			d.s.truncated = true
		}
		pageBytes += read
		if !d.extra {
			own, ok := budget[d.p]
			if !ok {
				own = t.maxBytes - d.p.sampleBytes
			}
			budget[d.p] = own - read
		}
	}
	if b.Len() > 0 {
		if err := execTolerant(ctx, b); err != nil {
			return counted, err
		}
	}
	for _, d := range details {
		if d.isString && d.value != nil {
			v, err := d.value.Val().AsBytes()
			if err != nil || d.value.Val().IsNil() {
				continue // gone, or no longer a string
			}
			d.s.value = v
			if !d.s.truncated {
				d.s.length = len(v)
			}
		}
		if d.isString && d.value == nil {
			t.record(d.p, sample{key: d.key, ttl: d.ttl, memUsage: d.s.memUsage, encoding: d.s.encoding, length: d.s.length}, false)
			continue
		}
		t.record(d.p, d.s, d.isString)
	}
	return counted, nil
}

// execTolerant runs a batch of reads; a command's error reply (a key gone,
// a command the server refuses) stays in its future, and only a failure to
// reach the server is returned.
func execTolerant(ctx context.Context, b *zipline.Batch) error {
	err := b.Exec(ctx)
	var se *zipline.ServerError
	if err == nil || errors.As(err, &se) || errors.Is(err, zipline.Nil) {
		return nil
	}
	return err
}

// refusedCommand reports whether err says the server will not run the
// command at all (unknown, disabled, or not allowed to this user).
func refusedCommand(err error) bool {
	var se *zipline.ServerError
	if !errors.As(err, &se) {
		return false
	}
	return se.Prefix == "NOPERM" || se.Prefix == "ERR" && (strings.Contains(se.Message, "unknown command") ||
		strings.Contains(se.Message, "unknown subcommand") || strings.Contains(se.Message, "disabled"))
}

// formatCount prints n with thousands separators.
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
