package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/analyze"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// nsSpecHelp documents the namespace syntax the commands take.
const nsSpecHelp = `comma-separated key=value pairs:
  prefix=user:        application key prefix (required)
  zip=u:              stored prefix; turns on key zipping
  buckets=dense:100   or hashed:N, or hashedfor:EXPECTEDKEYS
  codec=zstd          zstd, lz4, dict or none; level=N sets its level
                      (dict: zstd with dictionaries kept in the server; see zipline dict)
  oversize=key        key (default) or bucket
  bucketttl=1h        bucket-wide TTL on servers without field expiry`

// parseNamespace reads a namespace spec (see nsSpecHelp).
func parseNamespace(spec string) (layout.Namespace, error) {
	var ns layout.Namespace
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ns, fmt.Errorf("namespace %q: %q is not key=value", spec, part)
		}
		switch k {
		case "prefix":
			ns.Prefix = v
		case "zip":
			ns.ZipAs = v
		case "buckets":
			kind, n, _ := strings.Cut(v, ":")
			size, err := strconv.Atoi(n)
			if err != nil || size <= 0 {
				return ns, fmt.Errorf("namespace %q: buckets=%s needs a positive size", spec, v)
			}
			switch kind {
			case "dense":
				ns.Buckets = layout.Dense(size)
			case "hashed":
				ns.Buckets = layout.Hashed(size)
			case "hashedfor":
				ns.Buckets = layout.HashedFor(size)
			default:
				return ns, fmt.Errorf("namespace %q: unknown buckets kind %q", spec, kind)
			}
		case "codec":
			switch v {
			case "zstd":
				ns.Codec.Backend = codec.Zstd
			case "lz4":
				ns.Codec.Backend = codec.LZ4
			case "dict":
				ns.Codec.Backend = codec.ZstdDict // no Dictionary: kept in the server
			case "none", "":
				ns.Codec = zipline.Compression{}
			default:
				return ns, fmt.Errorf("namespace %q: unknown codec %q", spec, v)
			}
		case "level":
			l, err := strconv.Atoi(v)
			if err != nil {
				return ns, fmt.Errorf("namespace %q: level=%s: %w", spec, v, err)
			}
			ns.Codec.Level = l
		case "oversize":
			switch v {
			case "key":
				ns.Oversize = layout.OversizeAsKey
			case "bucket":
				ns.Oversize = layout.OversizeInBucket
			default:
				return ns, fmt.Errorf("namespace %q: oversize must be key or bucket", spec)
			}
		case "bucketttl":
			d, err := time.ParseDuration(v)
			if err != nil {
				return ns, fmt.Errorf("namespace %q: bucketttl=%s: %w", spec, v, err)
			}
			ns.BucketTTL = d
		default:
			return ns, fmt.Errorf("namespace %q: unknown key %q", spec, k)
		}
	}
	if ns.Prefix == "" {
		return ns, fmt.Errorf("namespace %q: prefix= is required", spec)
	}
	return ns, nil
}

// layoutOfSpec is a namespace spec as analyze prices a layout (migrate
// -dry-run's projection).
func layoutOfSpec(spec string) (analyze.Layout, error) {
	ns, err := parseNamespace(spec)
	if err != nil {
		return analyze.Layout{}, err
	}
	l := analyze.Layout{ZipAs: ns.ZipAs, Backend: ns.Codec.Backend, BucketTTL: ns.BucketTTL}
	for _, part := range strings.Split(spec, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "buckets="); ok {
			kind, n, _ := strings.Cut(v, ":")
			size, _ := strconv.Atoi(n) // parseNamespace checked it
			switch kind {
			case "dense":
				l.Dense = size
			case "hashedfor":
				l.HashedFor = size
			case "hashed":
				l.HashedFor = size * hashedPerBucket
			}
		}
	}
	return l, nil
}

// hashedPerBucket is the keys a Hashed bucket is sized for, as HashedFor
// sizes them (half the default listpack entries): Hashed(n) prices as
// HashedFor(n × this).
const hashedPerBucket = 64
