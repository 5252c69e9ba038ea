package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/analyze"
	"github.com/ziplinekv/zipline/testbed"
)

// cmdAnalyze is "zipline analyze" (see package analyze).
var cmdAnalyze = &command{
	name:     "analyze",
	summary:  "scan a keyspace (read-only, rate-limited) and say which layouts save how much memory, and how to apply them",
	synopsis: "[flags]",
	doc: `Scans a server or cluster gently (SCAN at -rate keys a second, at most -max-keys keys; TYPE, PTTL,
and for a bounded sample of each key pattern MEMORY USAGE, OBJECT ENCODING and the values), groups
keys by shape (user:<int>, session:<hex32>...), prices every layout on each namespace's own samples
(key zipping, Dense or Hashed buckets within the server's listpack limits, zstd and LZ4 as GLIDE
stores values, a zstd dictionary trained on half the samples), with the per-key costs measured on
this kind of server, and prints what to do and what it saves: a table, the zipline migrate commands
and the layout.Namespace values. Reads go to a replica when there is one. Nothing is written unless
-calibrate, which writes a bounded sample of each recommended layout under a unique prefix,
measures used_memory and deletes it.

-demo N starts a throwaway local server, fills it with about N keys of mixed data (JSON records,
counters, sessions, large documents, with and without TTLs) and analyzes it.`,
	flags: analyzeFlags,
}

// analyzeFlags defines analyze's flags and returns what runs it.
func analyzeFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	server := addServerFlags(fs, zipline.DefaultAddr, "server `host:port` (a cluster node's is enough)", urlFlagHelp+
		";\nthe password may also come from $ZIPLINE_PASSWORD, which keeps it out of the process list")
	password := fs.String("password", "", "password (ACL user with -user); prefer $ZIPLINE_PASSWORD or -url")
	user := fs.String("user", "", "ACL user name")
	replica := fs.String("replica", analyze.ReplicaAuto, "where to read: auto (a replica when one is reachable: each cluster "+
		"shard's, or one INFO replication lists), primary, or a replica's `host:port`")
	rate := fs.Int("rate", analyze.DefaultRate, "keys scanned per second at most (0: no limit)")
	maxKeys := fs.Int64("max-keys", analyze.DefaultMaxKeys, "keys scanned at most; figures are extrapolated to DBSIZE")
	samples := fs.Int("samples", analyze.DefaultSamples, "values read per key pattern at most")
	sampleBytes := fs.Int("sample-bytes", analyze.DefaultSampleBytes, "bytes of values read per key pattern at most")
	calibrate := fs.Bool("calibrate", false, "write a bounded sample of each recommended layout (and of the keys as they are) "+
		"under a unique prefix,\nmeasure used_memory, delete it, and correct the predictions by what was measured")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of the table")
	htmlOut := fs.String("html", "", "also write the report as a self-contained HTML page with charts to this `file`")
	price := fs.Float64("price-per-gb", analyze.DefaultPricePerGB, "dollars per GiB of cache memory a month, for the money "+
		"saved;\nthe default is AWS ElastiCache's cache.r7g.large on demand in us-east-1 ($0.219/h × 730 h / 13.07 GiB)")
	allowTTLChange := fs.Bool("allow-ttl-change", false, "also show layouts whose bucket-wide TTL replaces keys' own "+
		"(servers without field expiry),\nwith how many keys' TTLs they change and by how much; without it they are never shown")
	quiet := quietFlag(fs)
	demoKeys := fs.Int("demo", 0, "start a throwaway local server, fill it with about `N` keys of mixed demo data, and "+
		"analyze it\n(no -addr or -url)")
	kind := fs.String("kind", "redis", "with -demo: redis or valkey")
	return func(ctx context.Context, _ []string) error {
		switch {
		case *demoKeys < 0:
			return usagef("-demo %d: want a number of keys", *demoKeys)
		case *demoKeys > 0 && server.given():
			return usagef("-demo starts its own server: give no -addr or -url")
		case *kind != "redis" && *kind != "valkey":
			return usagef("-kind %q: want redis or valkey", *kind)
		case *rate < 0, *maxKeys <= 0, *samples <= 0, *sampleBytes <= 0:
			return usagef("-rate, -max-keys, -samples and -sample-bytes must be positive (-rate 0: no limit)")
		case *price < 0:
			return usagef("-price-per-gb %g: want a price", *price)
		}
		opts, err := server.options()
		if err != nil {
			return err
		}
		opts = withCredentials(opts, *user, *password)
		serverArgs := migrateServerArgs(server, opts)
		if *demoKeys > 0 {
			srv, stop, err := startDemoServer(ctx, testbed.Kind(*kind), *demoKeys, os.Stderr)
			if err != nil {
				return err
			}
			defer stop()
			opts = zipline.Options{Addr: srv.Addr}
			serverArgs = "-addr " + srv.Addr
		}
		cfg := analyze.Config{Options: opts, Replica: *replica, Rate: *rate, MaxKeys: *maxKeys, Samples: *samples,
			SampleBytes: *sampleBytes, Calibrate: *calibrate, PricePerGB: *price, ServerArgs: serverArgs,
			AllowTTLChange: *allowTTLChange}
		if *rate == 0 {
			cfg.Rate = -1
		}
		if *price != analyze.DefaultPricePerGB {
			cfg.PriceSource = "-price-per-gb"
		}
		bar := newProgress(os.Stderr, "keys", *quiet)
		cfg.Progress = func(p analyze.Progress) {
			eta := time.Duration(-1)
			if p.Scanned > 0 {
				eta = p.ETA()
			}
			bar.update(p.Scanned, p.Total, eta)
		}
		if bar != nil {
			cfg.Logger = slog.New(slog.NewTextHandler(bar, nil)) // a log line never lands inside the bar
		}
		start := time.Now()
		r, err := analyze.Run(ctx, cfg)
		bar.finish()
		if err != nil {
			return err
		}
		if *jsonOut {
			if err := r.WriteJSON(os.Stdout); err != nil {
				return err
			}
		} else if err := r.WriteText(os.Stdout); err != nil {
			return err
		}
		if *htmlOut != "" {
			if err := writeHTMLReport(r, *htmlOut); err != nil {
				return err
			}
			if !*jsonOut {
				fmt.Printf("\nwrote the HTML report to %s\n", *htmlOut)
			}
		}
		if !*quiet {
			fmt.Fprintf(os.Stderr, "analyzed in %v\n", time.Since(start).Round(100*time.Millisecond))
		}
		return nil
	}
}

// writeHTMLReport writes r's HTML page to path.
func writeHTMLReport(r *analyze.Report, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.WriteHTML(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// migrateServerArgs are the server flags of the zipline migrate commands
// analyze prints: the -addr given, or the -url without its password (which
// the user passes as $ZIPLINE_PASSWORD), never a password.
func migrateServerArgs(s *serverFlags, o zipline.Options) string {
	if !s.set()["url"] {
		if o.Username != "" {
			return fmt.Sprintf("-addr %s -user %s", s.addr, o.Username)
		}
		return "-addr " + s.addr
	}
	u, err := url.Parse(s.url)
	if err != nil {
		return "-url URL"
	}
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			u.User = url.User(name)
		} else {
			u.User = nil
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return "-url '" + strings.ReplaceAll(u.String(), "'", `'\''`) + "'"
}

// startDemoServer starts a throwaway server of kind and fills it with
// about keys keys of the demo keyspace (package analyze, FillDemo).
func startDemoServer(ctx context.Context, kind testbed.Kind, keys int, log io.Writer) (*testbed.Server, func(), error) {
	srv, err := testbed.Start(testbed.Config{Kind: kind, Args: []string{"--latency-tracking", "no"}})
	if err != nil {
		return nil, nil, fmt.Errorf("starting a local %s server: %w", kind, err)
	}
	fmt.Fprintf(log, "started %s on %s (no persistence; stopped on exit); filling it with about %d keys...\n",
		serverVersion(srv), srv.Addr, keys)
	c, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		srv.Stop()
		return nil, nil, err
	}
	defer c.Close()
	start := time.Now()
	n, err := analyze.FillDemo(ctx, c, keys, 1, 8)
	if err != nil {
		srv.Stop()
		return nil, nil, fmt.Errorf("filling the demo server: %w", err)
	}
	fmt.Fprintf(log, "wrote %d keys in %v\n", n, time.Since(start).Round(100*time.Millisecond))
	return srv, srv.Stop, nil
}
