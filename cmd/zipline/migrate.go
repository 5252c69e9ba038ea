package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
)

func runMigrate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	addr := fs.String("addr", zipline.DefaultAddr, "server address")
	rawURL := fs.String("url", "", "server URL, redis[s]://[user[:password]@]host:port[/db] (instead of -addr); "+
		"the password may also come from $ZIPLINE_PASSWORD, which keeps it out of the process list")
	password := fs.String("password", "", "password (ACL user with -user); prefer $ZIPLINE_PASSWORD or -url, "+
		"a flag shows in the process list")
	user := fs.String("user", "", "ACL user name")
	from := fs.String("from", "", "layout to migrate from ("+nsSpecHelp+")")
	to := fs.String("to", "", "layout to migrate to (same syntax)")
	rate := fs.Int("rate", 0, "keys per second at most (0: no limit)")
	batch := fs.Int("batch", 100, "keys moved per round trip")
	state := fs.String("state", "", "file that records the scan cursor, to resume after an interruption")
	dryRun := fs.Bool("dry-run", false, "print the projected memory saving, move nothing")
	sweep := fs.Bool("sweep", false, "move nothing: delete the tombstones that a migration on a cluster left in the -to layout\n"+
		"(once a run reports the migration complete and no process uses MigrateFrom any more)")
	sample := fs.Int("sample", 1000, "keys sampled by -dry-run")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: zipline migrate -from SPEC -to SPEC [flags]\n\nMoves a namespace's keys to a new layout, "+
			"in the background of a live application\n(which should already use the new layout with MigrateFrom set).\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *to == "" || (*from == "" && !*sweep) {
		fs.Usage()
		return errors.New("migrate needs -from and -to (-sweep needs only -to)")
	}
	newNS, err := parseNamespace(*to)
	if err != nil {
		return err
	}
	if !*sweep {
		oldNS, err := parseNamespace(*from)
		if err != nil {
			return err
		}
		newNS.MigrateFrom = &oldNS
	}
	// A cluster node's address is enough: the client discovers the rest.
	opts, err := serverOptions(*addr, *rawURL, *user, *password)
	if err != nil {
		return err
	}
	c, err := zipline.New(opts)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := layout.New(ctx, c, newNS)
	if err != nil {
		return err
	}
	if *sweep {
		n, err := s.Sweep(ctx)
		fmt.Printf("deleted %d tombstone sets\n", n)
		return err
	}
	if *dryRun {
		e, err := s.Estimate(ctx, *sample)
		if err != nil {
			return err
		}
		fmt.Printf("keys in the old layout: %d (sampled %d)\n", e.Keys, e.Sampled)
		fmt.Printf("bytes per key: %.1f now, %.1f projected (%.1fx smaller)\n", e.OldPerKey, e.NewPerKey, e.SavedFactor)
		fmt.Printf("projected saving: %s\n", megabytes(e.SavedBytes))
		return nil
	}
	total, err := s.Source().Count(ctx)
	if err != nil {
		return err
	}
	cursor := readState(*state)
	bar := progressBar{total: total, start: time.Now(), out: os.Stderr}
	p, err := s.Migrate(ctx, layout.MigrateOptions{Batch: *batch, Rate: *rate, Cursor: cursor,
		OnProgress: func(p layout.Progress) {
			bar.draw(p)
			writeState(*state, p.Cursor)
		}})
	bar.finish()
	fmt.Printf("moved %d, already gone %d, changed during the move %d, kept (TTL cannot carry over) %d, "+
		"old copies of newer values deleted %d\n", p.Moved, p.Missing, p.Changed, p.Kept, p.Replaced)
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

type progressBar struct {
	total int64
	start time.Time
	out   *os.File
	drawn bool
}

func (b *progressBar) draw(p layout.Progress) {
	done := int64(p.Scanned)
	frac := 1.0
	if b.total > 0 {
		frac = min(float64(done)/float64(b.total), 1)
	}
	const width = 30
	filled := int(frac * width)
	rate := float64(done) / max(time.Since(b.start).Seconds(), 1e-3)
	eta := "?"
	if rate > 0 && b.total > done {
		eta = (time.Duration(float64(b.total-done)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(b.out, "\r[%s%s] %3.0f%% %d/%d keys  %.0f keys/s  ETA %s ", strings.Repeat("#", filled),
		strings.Repeat(".", width-filled), 100*frac, done, b.total, rate, eta)
	b.drawn = true
}

func (b *progressBar) finish() {
	if b.drawn {
		fmt.Fprintln(b.out)
	}
}

func megabytes(b float64) string { return fmt.Sprintf("%.2f MB", b/1e6) }

// serverOptions builds client options from -addr or -url, -user, and a
// password from -password, the URL, or $ZIPLINE_PASSWORD (in that order of
// precedence: the environment never overrides what was given explicitly).
func serverOptions(addr, rawURL, user, password string) (zipline.Options, error) {
	o := zipline.Options{Addr: addr}
	if rawURL != "" {
		var err error
		if o, err = zipline.ParseURL(rawURL); err != nil {
			return o, err
		}
	}
	if user != "" {
		o.Username = user
	}
	switch {
	case password != "":
		o.Password = password
	case o.Password == "":
		o.Password = os.Getenv("ZIPLINE_PASSWORD")
	}
	return o, nil
}
