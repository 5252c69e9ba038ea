package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/layouts"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// demoLayoutRecords is how many records each row of the demo's namespace
// section stores (tests lower it).
var demoLayoutRecords = 100_000

// The names of the namespace section's keys: records are stored as plain
// keys demoLayoutPrefix+id, and through the namespace under
// demoLayoutZipAs, which the demo owns whole.
const demoLayoutPrefix, demoLayoutZipAs = "demo:user:", "demo:u:"

// declareLayoutKeys declares the keys demoLayouts writes.
func declareLayoutKeys(k *demoKeys) {
	k.add(demoLayoutRecords, func(id int) string { return demoLayoutPrefix + strconv.Itoa(id) })
	k.addPrefix(demoLayoutZipAs)
}

// demoRow is one row of the demo's namespace section: records written as
// plain keys, then through a namespace.
type demoRow struct {
	name  string
	codec zipline.Compression
	// write queues record id at key, through q if not nil, else as a plain
	// key on b.
	write func(b *zipline.Batch, q *layout.Queued, key string, id int)
	value func(id int) []byte // what reading id returns
}

// demoLayouts is the demo's namespace section: the same records stored as
// plain keys and through a namespace (zipped keys, Dense buckets and
// compression), with the server's memory after each. It deletes its keys
// afterwards.
func demoLayouts(ctx context.Context, d *demoEnv) error {
	c, n := d.client, demoLayoutRecords
	const prefix, zipAs = demoLayoutPrefix, demoLayoutZipAs
	// The dictionary is trained on other records than the ones stored.
	var samples [][]byte
	for id := n; id < n+1000; id++ {
		samples = append(samples, demoProfile(id))
	}
	dict, err := codec.TrainDictionary(samples, 0)
	if err != nil {
		return err
	}
	set := func(b *zipline.Batch, q *layout.Queued, key string, id int) {
		if q != nil {
			q.Set(key, demoProfile(id))
		} else {
			b.Set(key, demoProfile(id))
		}
	}
	rows := []demoRow{
		{name: "visit counters (INCRBY)", codec: zipline.Compression{Backend: codec.Zstd},
			write: func(b *zipline.Batch, q *layout.Queued, key string, id int) {
				if q != nil {
					q.IncrBy(key, int64(1+id%500))
				} else {
					b.IncrBy(key, int64(1+id%500))
				}
			},
			value: func(id int) []byte { return strconv.AppendInt(nil, int64(1+id%500), 10) }},
		{name: "profiles (JSON), zstd", codec: zipline.Compression{Backend: codec.Zstd}, write: set, value: demoProfile},
		{name: "profiles (JSON), zstd-dict", codec: zipline.Compression{Backend: codec.ZstdDict, Dictionary: dict},
			write: set, value: demoProfile},
	}
	mean := 0
	for id := range n {
		mean += len(demoProfile(id))
	}
	fmt.Printf("\nNamespaces: %d records stored as plain keys %s<id>, then through a namespace\n", n, prefix)
	fmt.Printf("  layout.Namespace{Prefix: %q, ZipAs: %q, Buckets: layout.Dense(100), Codec: …}\n", prefix, zipAs)
	fmt.Printf("  profiles are JSON of %d B on average; zstd-dict uses a %d-B dictionary trained on 1,000 other profiles\n",
		mean/max(n, 1), len(dict))
	if d.srv == nil {
		fmt.Println("  (on a server given with -addr: other clients' writes show up in these figures)")
	}
	fmt.Printf("\n  %-27s %24s %24s %8s\n", "records", "plain keys", "namespace", "saved")
	for _, row := range rows {
		if err := demoLayoutRow(ctx, c, row, prefix, zipAs, n); err != nil {
			return err
		}
	}
	fmt.Println("\n  Server memory is used_memory minus client buffers; the keys are deleted afterwards. Values of")
	fmt.Println("  up to 64 B (after compression) live in 100-field listpack hashes (demo:u:#<bucket>); larger ones")
	fmt.Println("  stay plain keys, so that a bucket never loses its compact encoding: plain zstd leaves these")
	fmt.Println("  profiles too large, a trained dictionary makes them fit. \"zipline bench layouts\" has the full table.")
	return nil
}

// demoLayoutRow measures one row of the demo's namespace section.
func demoLayoutRow(ctx context.Context, c *zipline.Client, row demoRow, prefix, zipAs string, n int) error {
	const settle = 3 * time.Second
	st, err := layout.New(ctx, c, layout.Namespace{Prefix: prefix, ZipAs: zipAs, Buckets: layout.Dense(100), Codec: row.codec})
	if err != nil {
		return err
	}
	dbsize := func() int64 {
		v, err := c.Do(ctx, "DBSIZE")
		if err != nil {
			return 0
		}
		k, _ := v.AsInt64()
		return k
	}
	load := func(q func(*zipline.Batch) *layout.Queued) error {
		for from := 0; from < n; from += 1000 {
			b := c.Batch()
			qq := q(b)
			for id := from; id < min(from+1000, n); id++ {
				row.write(b, qq, prefix+strconv.Itoa(id), id)
			}
			if err := b.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	before, err := layouts.SettledMemory(ctx, c, settle)
	if err != nil {
		return err
	}
	keys0 := dbsize()
	if err := load(func(*zipline.Batch) *layout.Queued { return nil }); err != nil {
		return err
	}
	plainMem, err := layouts.SettledMemory(ctx, c, settle)
	if err != nil {
		return err
	}
	plainKeys := dbsize() - keys0
	if err := unlinkPlain(ctx, c, prefix, n); err != nil {
		return err
	}
	before2, err := layouts.SettledMemory(ctx, c, settle)
	if err != nil {
		return err
	}
	if err := load(st.In); err != nil {
		return err
	}
	nsMem, err := layouts.SettledMemory(ctx, c, settle)
	if err != nil {
		return err
	}
	nsKeys := dbsize() - keys0
	for _, id := range []int{0, n / 2, n - 1} {
		v, err := st.Get(ctx, prefix+strconv.Itoa(id))
		if err != nil || !bytes.Equal(v, row.value(id)) {
			return fmt.Errorf("demo: %s%d read back %q, %v", prefix, id, v, err)
		}
	}
	// The namespace's keys: its buckets and any values stored as plain keys.
	if err := unlinkPrefix(ctx, c, zipAs); err != nil {
		return err
	}
	p, z := plainMem-before, nsMem-before2
	fmt.Printf("  %-27s %9.2f MB %5.1f B/rec %9.2f MB %5.1f B/rec %7.1f×\n", row.name,
		float64(p)/1e6, float64(p)/float64(n), float64(z)/1e6, float64(z)/float64(n), float64(p)/float64(max(z, 1)))
	fmt.Printf("  %-27s server memory %.2f → %.2f MB with %d plain keys; %.2f → %.2f MB with %d keys through the namespace\n", "",
		float64(before)/1e6, float64(plainMem)/1e6, plainKeys, float64(before2)/1e6, float64(nsMem)/1e6, nsKeys)
	return nil
}

// demoProfile is a small JSON user record for id, about 130 B.
func demoProfile(id int) []byte {
	first := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "John", "Radia"}
	last := []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Hamilton", "Backus"}
	plans := []string{"free", "free", "pro", "team"}
	locales := []string{"en-GB", "en-US", "fr-FR", "de-DE", "nl-NL"}
	f, l := first[id%len(first)], last[id/len(first)%len(last)]
	b := []byte(`{"id":`)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"name":"`...)
	b = append(append(append(b, f...), ' '), l...)
	b = append(b, `","email":"`...)
	b = append(append(append(b, strings.ToLower(f)...), '.'), strings.ToLower(l)...)
	b = strconv.AppendInt(b, int64(id%97), 10)
	b = append(b, `@example.com","plan":"`...)
	b = append(b, plans[id%len(plans)]...)
	b = append(b, `","locale":"`...)
	b = append(b, locales[id/7%len(locales)]...)
	b = append(b, `","visits":`...)
	b = strconv.AppendInt(b, int64(id*7919%1000), 10)
	b = append(b, `,"active":`...)
	b = strconv.AppendBool(b, id%5 != 0)
	return append(b, '}')
}

// unlinkPlain removes the demo's plain keys.
func unlinkPlain(ctx context.Context, c *zipline.Client, prefix string, n int) error {
	for from := 0; from < n; from += 1000 {
		keys := make([]string, 0, 1000)
		for id := from; id < min(from+1000, n); id++ {
			keys = append(keys, prefix+strconv.Itoa(id))
		}
		if _, err := c.Unlink(ctx, keys...); err != nil {
			return err
		}
	}
	return nil
}

// unlinkPrefix removes every key under a stored prefix the demo owns.
func unlinkPrefix(ctx context.Context, c *zipline.Client, prefix string) error {
	for cursor := "0"; ; {
		v, err := c.Do(ctx, "SCAN", cursor, "MATCH", prefix+"*", "COUNT", 1000)
		if err != nil {
			return err
		}
		page, err := v.AsSlice()
		if err != nil || len(page) != 2 {
			return errors.Join(err, errors.New("demo: malformed SCAN reply"))
		}
		keys, _ := page[1].AsStrings()
		if len(keys) > 0 {
			if _, err := c.Unlink(ctx, keys...); err != nil {
				return err
			}
		}
		if cursor, _ = page[0].AsString(); cursor == "0" {
			return nil
		}
	}
}
