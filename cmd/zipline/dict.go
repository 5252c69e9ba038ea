package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
)

// cmdDict is "zipline dict": the zstd dictionaries a namespace keeps in the
// server (codec=dict).
var cmdDict = &command{
	name:     "dict",
	summary:  "train, rotate, list and drop the dictionaries a namespace keeps in the server (codec=dict)",
	synopsis: "<train|rotate|list|drop> -namespace SPEC [flags]",
	doc: `A namespace with codec=dict compresses its values with zstd dictionaries kept in the server,
beside its keys, so that every process reads and writes them with no dictionary in its
configuration. train samples the namespace's values, trains a dictionary and makes it the
one values are written with; rotate trains a new one, re-encodes every value with it (live,
resumable, rate-limited) and drops the old ones once no value names them; list shows them;
drop deletes those no value names.`,
	subs: []*command{cmdDictTrain, cmdDictRotate, cmdDictList, cmdDictDrop},
	noun: "action",
}

var (
	cmdDictTrain = &command{name: "train", summary: "train a dictionary on the namespace's values and make it active",
		synopsis: "-namespace SPEC [flags]",
		doc: `Samples the namespace's values (bounded, at -rate), trains a zstd dictionary in this process,
stores it in the server and makes it the one new values are written with. Values already
stored keep theirs until "zipline dict rotate -no-train" re-encodes them. With -from, it
samples another namespace instead: the one "zipline migrate" will then move the values
from, writing each with the dictionary at once.`,
		flags: dictTrainFlags}
	cmdDictRotate = &command{name: "rotate", summary: "train a new dictionary, re-encode every value with it, drop the old",
		synopsis: "-namespace SPEC [flags]",
		doc: `Trains a new dictionary (unless -no-train), re-encodes the values written otherwise, pass after
pass until one finds nothing to do, and then, once every process writes with the new one
(layout.DictionaryGrace after it became active), drops the dictionaries no value names.
Killed at any point, it loses nothing: run it again with -no-train to finish.`,
		flags: dictRotateFlags}
	cmdDictList = &command{name: "list", summary: "list the namespace's dictionaries", synopsis: "-namespace SPEC",
		doc: `Lists the dictionaries kept in the server for the namespace, and which is active.`, flags: dictListFlags}
	cmdDictDrop = &command{name: "drop", summary: "delete the dictionaries no stored value names", synopsis: "-namespace SPEC",
		doc: `Scans the namespace (read-only) and deletes the dictionaries that no stored value names and
that are not active.`, flags: dictDropFlags}
)

// dictCommon are the flags every dict action takes.
type dictCommon struct {
	server    *serverFlags
	user      *string
	password  *string
	namespace *string
}

func addDictFlags(fs *flag.FlagSet) dictCommon {
	return dictCommon{
		server:    addServerFlags(fs, zipline.DefaultAddr, "server `host:port` (a cluster node's is enough)", urlFlagHelp),
		user:      fs.String("user", "", "ACL user name"),
		password:  fs.String("password", "", "password; prefer $ZIPLINE_PASSWORD or -url, a flag shows in the process list"),
		namespace: fs.String("namespace", "", "the namespace, a `SPEC` with codec=dict: "+nsSpecHelp),
	}
}

// open connects and opens the namespace's Store; close the Client after.
func (d dictCommon) open(ctx context.Context) (*zipline.Client, *layout.Store, error) {
	if *d.namespace == "" {
		return nil, nil, usagef("-namespace is required")
	}
	ns, err := parseNamespace(*d.namespace)
	if err != nil {
		return nil, nil, usagef("-namespace: %w", err)
	}
	opts, err := d.server.options()
	if err != nil {
		return nil, nil, err
	}
	c, err := zipline.New(withCredentials(opts, *d.user, *d.password))
	if err != nil {
		return nil, nil, err
	}
	s, err := layout.New(ctx, c, ns)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, s, nil
}

func addTrainFlags(fs *flag.FlagSet) func() layout.TrainOptions {
	size := fs.Int("size", 0, "dictionary size in bytes (0: 16 KiB)")
	samples := fs.Int("samples", 0, "values sampled at most (0: 2,000)")
	maxKeys := fs.Int("max-keys", 0, "keys read at most to find samples (0: 50,000)")
	rate := fs.Int("rate", 0, "keys read per second at most (0: no limit)")
	return func() layout.TrainOptions {
		return layout.TrainOptions{Size: *size, MaxSamples: *samples, MaxKeys: *maxKeys, Rate: *rate}
	}
}

func dictTrainFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	common := addDictFlags(fs)
	train := addTrainFlags(fs)
	from := fs.String("from", "", "sample this namespace's values instead (a `SPEC`: the one \"zipline migrate\" will move them from)")
	return func(ctx context.Context, _ []string) error {
		var src layout.Namespace
		if *from != "" {
			var err error
			if src, err = parseNamespace(*from); err != nil {
				return usagef("-from: %w", err)
			}
		}
		c, s, err := common.open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		opts := train()
		if *from != "" {
			if opts.From, err = layout.New(ctx, c, src); err != nil {
				return err
			}
		}
		start := time.Now()
		id, err := s.TrainDictionary(ctx, opts)
		if err != nil {
			return err
		}
		next := `run "zipline dict rotate -no-train" to re-encode the values stored before`
		if *from != "" {
			next = `"zipline migrate" writes the values it moves with it`
		}
		fmt.Printf("dictionary %d trained in %s and active; %s\n", id, time.Since(start).Round(time.Millisecond), next)
		return nil
	}
}

func dictRotateFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	common := addDictFlags(fs)
	train := addTrainFlags(fs)
	noTrain := fs.Bool("no-train", false, "re-encode with the active dictionary and drop the old (finish a rotation)")
	batch := fs.Int("batch", 100, "stored keys read per round trip")
	passes := fs.Int("passes", 10, "re-encoding passes at most")
	return func(ctx context.Context, _ []string) error {
		c, s, err := common.open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return rotate(ctx, s, os.Stdout, rotateRun{train: !*noTrain, trainOpts: train(), batch: *batch,
			rate: train().Rate, passes: *passes})
	}
}

// rotateRun is a rotation's settings.
type rotateRun struct {
	train       bool
	trainOpts   layout.TrainOptions
	batch, rate int
	passes      int
}

// rotate trains (unless told not to), re-encodes until a pass finds
// nothing to do, waits out the grace and drops the dictionaries no value
// names.
func rotate(ctx context.Context, s *layout.Store, out io.Writer, r rotateRun) error {
	if r.train {
		id, err := s.TrainDictionary(ctx, r.trainOpts)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "dictionary %d trained and active\n", id)
	}
	for pass := 1; ; pass++ {
		p, err := s.Reencode(ctx, layout.ReencodeOptions{Batch: r.batch, Rate: r.rate})
		if err != nil {
			return fmt.Errorf("pass %d: %w (run again with -no-train to go on)", pass, err)
		}
		fmt.Fprintf(out, "pass %d: %d stored keys, %d values, %d re-encoded, %d changed meanwhile\n",
			pass, p.Scanned, p.Values, p.Rewritten, p.Changed)
		if p.Complete() {
			break
		}
		if pass == r.passes {
			return fmt.Errorf("values still change after %d passes; run again with -no-train", pass)
		}
	}
	for {
		dropped, err := s.DropDictionaries(ctx)
		switch {
		case err == nil:
			fmt.Fprintf(out, "dropped %d dictionaries no value names: %v\n", len(dropped), dropped)
			return nil
		case !errors.Is(err, layout.ErrDictionaryGrace):
			return err
		}
		fmt.Fprintf(out, "%v; waiting\n", err)
		t := time.NewTimer(5 * time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func dictListFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	common := addDictFlags(fs)
	return func(ctx context.Context, _ []string) error {
		c, s, err := common.open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		ids, active, err := s.Dictionaries(ctx)
		if err != nil {
			return err
		}
		for _, id := range ids {
			mark := ""
			if id == active {
				mark = " (active)"
			}
			fmt.Printf("%d%s\n", id, mark)
		}
		if len(ids) == 0 {
			fmt.Println("no dictionary yet: run zipline dict train")
		}
		return nil
	}
}

func dictDropFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	common := addDictFlags(fs)
	return func(ctx context.Context, _ []string) error {
		c, s, err := common.open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		dropped, err := s.DropDictionaries(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("dropped %d dictionaries: %v\n", len(dropped), dropped)
		return nil
	}
}
