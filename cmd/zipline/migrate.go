package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/analyze"
	"github.com/ziplinekv/zipline/cmd/zipline/rollout"
	"github.com/ziplinekv/zipline/layout"
)

// cmdMigrate is "zipline migrate".
var cmdMigrate = &command{
	name:     "migrate",
	summary:  "move a namespace's keys to a new layout, live, resumable (-dry-run projects the saving)",
	synopsis: "-from SPEC -to SPEC [flags] | -decompress -match PATTERN [flags]",
	doc: `Moves a namespace's keys to a new layout, in the background of a live application
(which should already use the new layout with MigrateFrom set). -dry-run projects the
saving and moves nothing; -state makes a run resumable; -sweep, after a migration on a
cluster, deletes the tombstones it left. -from and -to describe the layouts (a SPEC each).

With -decompress -match PATTERN it rewrites plain the compressed strings under the keys
the pattern selects, each only if unchanged since read, keeping its TTL: the last step of
turning compression off, once every writer has Compression.WritePlain (README, "Rolling
compression out"). Run it until it reports nothing changed meanwhile.`,
	flags: migrateFlags,
}

// migrateFlags defines migrate's flags and returns what runs it.
func migrateFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	server := addServerFlags(fs, zipline.DefaultAddr, "server `host:port` (a cluster node's is enough)", urlFlagHelp+
		";\nthe password may also come from $ZIPLINE_PASSWORD, which keeps it out of the process list")
	password := fs.String("password", "", "password (ACL user with -user); prefer $ZIPLINE_PASSWORD or -url, "+
		"a flag shows in the process list")
	user := fs.String("user", "", "ACL user name")
	from := fs.String("from", "", "layout to migrate from, a `SPEC`: "+nsSpecHelp)
	to := fs.String("to", "", "layout to migrate to, a `SPEC` (the same syntax)")
	rate := fs.Int("rate", 0, "keys per second at most (0: no limit)")
	batch := fs.Int("batch", 100, "keys moved per round trip")
	state := fs.String("state", "", "file that records the scan cursor, to resume after an interruption")
	dryRun := fs.Bool("dry-run", false, "print the projected memory saving, move nothing")
	sweep := fs.Bool("sweep", false, "move nothing: delete the tombstones that a migration on a cluster left in the -to layout\n"+
		"(once a run reports the migration complete and no process uses MigrateFrom any more)")
	sample := fs.Int("sample", 1000, "keys sampled by -dry-run")
	allowTTLChange := fs.Bool("allow-ttl-change", false, "move keys with TTLs into buckets whose bucket-wide TTL (bucketttl=) "+
		"replaces their own;\nwithout it such a layout is refused: its keys would expire with their bucket, not when the "+
		"application said")
	decompress := fs.Bool("decompress", false, "rewrite plain the compressed strings under -match (no -from or -to)")
	match := fs.String("match", "", "with -decompress: the keys, a `PATTERN` as SCAN MATCH takes it")
	quiet := quietFlag(fs)
	return func(ctx context.Context, _ []string) error {
		if *decompress || *match != "" {
			if !*decompress || *match == "" || *from != "" || *to != "" {
				return usagef("-decompress needs -match, and no -from or -to")
			}
			opts, err := server.options()
			if err != nil {
				return err
			}
			return decompressPass(ctx, withCredentials(opts, *user, *password), *match, *rate, *batch, *quiet)
		}
		if *to == "" || (*from == "" && !*sweep) {
			return usagef("migrate needs -from and -to (-sweep needs only -to)")
		}
		newNS, err := parseNamespace(*to)
		if err != nil {
			return usagef("-to: %w", err)
		}
		if !*sweep {
			oldNS, err := parseNamespace(*from)
			if err != nil {
				return usagef("-from: %w", err)
			}
			newNS.MigrateFrom = &oldNS
		}
		// A cluster node's address is enough: the client discovers the rest.
		opts, err := server.options()
		if err != nil {
			return err
		}
		if newNS.BucketTTL > 0 && !*allowTTLChange && !*sweep {
			return usagef("-to %s has a bucket-wide TTL (bucketttl=), which replaces the TTL of every key with one that "+
				"it moves into a bucket: they would expire with their bucket, not when the application said. Pass "+
				"-allow-ttl-change to move them anyway, or drop bucketttl= (keys with TTLs then stay as they are)", *to)
		}
		target, err := layoutOfSpec(*to)
		if err != nil {
			return usagef("-to: %w", err)
		}
		return migrate(ctx, withCredentials(opts, *user, *password), newNS, migrateRun{
			rate: *rate, batch: *batch, state: *state, dryRun: *dryRun, sweep: *sweep, sample: *sample,
			quiet: *quiet, target: target})
	}
}

// migrateRun is what migrate's flags ask of a run, besides the server and
// the layouts.
type migrateRun struct {
	rate, batch, sample int
	state               string
	dryRun, sweep       bool
	quiet               bool           // no progress reports
	target              analyze.Layout // -to, as -dry-run prices it
}

// migrate moves newNS.MigrateFrom's keys to newNS on the server opts
// reaches (with sweep, deletes the tombstones instead; with dryRun,
// projects the saving).
func migrate(ctx context.Context, opts zipline.Options, newNS layout.Namespace, r migrateRun) error {
	c, err := zipline.New(opts)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := layout.New(ctx, c, newNS)
	if err != nil {
		return err
	}
	if r.sweep {
		n, err := s.Sweep(ctx)
		fmt.Printf("deleted %d tombstone sets\n", n)
		return err
	}
	if r.dryRun {
		return dryRun(ctx, opts, s, newNS, r)
	}
	total, err := s.Source().Count(ctx)
	if err != nil {
		return err
	}
	cursor := readState(r.state)
	bar := newProgress(os.Stderr, "keys", r.quiet)
	p, err := s.Migrate(ctx, layout.MigrateOptions{Batch: r.batch, Rate: r.rate, Cursor: cursor,
		OnProgress: func(p layout.Progress) {
			bar.update(int64(p.Scanned), total, -1)
			writeState(r.state, p.Cursor)
		}})
	bar.finish()
	fmt.Printf("moved %d, already gone %d, changed during the move %d, kept (TTL cannot carry over) %d, "+
		"old copies of newer values deleted %d\n", p.Moved, p.Missing, p.Changed, p.Kept, p.Replaced)
	if p.TTLChanged > 0 {
		fmt.Printf("TTLs replaced by their bucket's (-allow-ttl-change): %d keys now expire with their bucket, within %s\n",
			p.TTLChanged, newNS.BucketTTL)
	}
	if err != nil {
		if p.Cursor == "" { // a cluster's scan cannot resume
			return fmt.Errorf("stopped (run again to start over; moved keys are not moved again): %w", err)
		}
		return fmt.Errorf("stopped at cursor %s (resume with -state): %w", p.Cursor, err)
	}
	switch {
	case p.Changed > 0:
		fmt.Println("some keys changed while moving: run migrate again to move them")
	case p.Complete():
		fmt.Println("the migration is complete: once no process uses MigrateFrom, run with -sweep (on a cluster) and drop MigrateFrom")
	}
	return nil
}

func readState(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func writeState(path, cursor string) {
	if path == "" {
		return
	}
	tmp := path + ".tmp"
	if os.WriteFile(tmp, []byte(cursor+"\n"), 0o644) == nil {
		os.Rename(tmp, path)
	}
}

func megabytes(b float64) string { return fmt.Sprintf("%.2f MB", b/1e6) }

// withCredentials sets -user on o, and the password from -password, else
// the URL's, else $ZIPLINE_PASSWORD (in that order of precedence: the
// environment never overrides what was given explicitly).
func withCredentials(o zipline.Options, user, password string) zipline.Options {
	if user != "" {
		o.Username = user
	}
	switch {
	case password != "":
		o.Password = password
	case o.Password == "":
		o.Password = os.Getenv("ZIPLINE_PASSWORD")
	}
	return o
}

// decompressPass is migrate -decompress.
func decompressPass(ctx context.Context, opts zipline.Options, match string, rate, batch int, quiet bool) error {
	c, err := zipline.New(opts)
	if err != nil {
		return err
	}
	defer c.Close()
	bar := newProgress(os.Stderr, "keys", quiet)
	r, err := rollout.Decompress(ctx, c, match, rollout.Options{Rate: rate, Batch: batch,
		Progress: func(scanned int64) { bar.update(scanned, 0, -1) }})
	bar.finish()
	fmt.Printf("keys %d, strings %d: rewritten plain %d, changed meanwhile %d; compressed values left %d\n",
		r.Keys, r.Strings, r.Plain, r.Changed, r.Left)
	if err != nil {
		return err
	}
	switch {
	case r.Changed > 0:
		fmt.Println("some values changed while rewriting: make sure no writer compresses (Compression.WritePlain), and run again")
	case r.Left > 0:
		fmt.Println("hash fields, list elements and values written with a dictionary are left compressed: " +
			"read and write them through a Client with Compression.WritePlain")
	default:
		fmt.Println("every value under the pattern is plain")
	}
	return nil
}

// dryRun projects what the migration saves. From plain keys it prices the
// move with analyze's model (analyze.Project), so that it says what
// analyze said of the same layout; from another layout, from a sample
// (layout.Store.Estimate).
func dryRun(ctx context.Context, opts zipline.Options, s *layout.Store, newNS layout.Namespace, r migrateRun) error {
	rate := -1 // no limit
	if r.rate > 0 {
		rate = r.rate
	}
	pr, err := analyze.Project(ctx, analyze.Config{Options: opts, Rate: rate, Replica: analyze.ReplicaPrimary,
		Logger: slog.New(slog.DiscardHandler)}, *newNS.MigrateFrom, r.target)
	if errors.Is(err, analyze.ErrNotPlain) {
		e, err := s.Estimate(ctx, r.sample)
		if err != nil {
			return err
		}
		fmt.Printf("keys in the old layout: %d (sampled %d)\n", e.Keys, e.Sampled)
		fmt.Printf("bytes per key: %.1f now, %.1f projected (%.1fx smaller)\n", e.OldPerKey, e.NewPerKey, e.SavedFactor)
		fmt.Printf("projected saving: %s\n", megabytes(e.SavedBytes))
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("keys in the old layout: %d (values read %d)\n", pr.Keys, pr.Samples)
	fmt.Printf("memory: %s now, %s projected\n", megabytes(pr.Bytes), megabytes(pr.BytesAfter))
	fmt.Printf("projected saving: %s (95 %%: %s to %s; %.0f bytes)\n", megabytes(pr.Saved), megabytes(pr.SavedLow),
		megabytes(pr.SavedHigh), pr.Saved)
	if pr.TTLChange != nil {
		fmt.Printf("TTLs changed: %s\n", pr.TTLChange)
	}
	if pr.Kept > 0 {
		fmt.Printf("kept in the old layout: %d keys with TTLs, which the server cannot expire inside a bucket\n", pr.Kept)
	}
	return nil
}
