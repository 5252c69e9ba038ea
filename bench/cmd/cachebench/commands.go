package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ziplinekv/zipline"
)

// commandCounter reads what the server ran, by command, from INFO
// commandstats, on a connection of its own.
type commandCounter struct{ c *zipline.Client }

func newCommandCounter(addr string) (*commandCounter, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet})
	if err != nil {
		return nil, err
	}
	return &commandCounter{c: c}, nil
}

func (cc *commandCounter) Close() error { return cc.c.Close() }

// commandCalls is calls per command, by INFO commandstats name ("get",
// "client|caching", "multi", ...).
type commandCalls map[string]uint64

// snapshot returns the server's calls so far.
func (cc *commandCounter) snapshot(ctx context.Context) (commandCalls, error) {
	info, err := cc.c.Info(ctx, "commandstats")
	if err != nil {
		return nil, err
	}
	m := commandCalls{}
	for k, v := range info {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		n, err := strconv.ParseUint(calls, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("INFO commandstats %s: %q", k, v)
		}
		m[name] = n
	}
	return m, nil
}

// since is what ran between before and m, leaving out the counting itself
// (INFO) and health checks (PING).
func (m commandCalls) since(before commandCalls) commandCalls {
	d := commandCalls{}
	for name, n := range m {
		if name == "info" || name == "ping" || n <= before[name] {
			continue
		}
		d[name] = n - before[name]
	}
	return d
}

func (m commandCalls) add(o commandCalls) commandCalls {
	if m == nil {
		m = commandCalls{}
	}
	for name, n := range o {
		m[name] += n
	}
	return m
}

func (m commandCalls) total() (n uint64) {
	for _, c := range m {
		n += c
	}
	return n
}

// per formats the calls per read, most frequent first: "get 0.051,
// pttl 0.051".
func (m commandCalls) per(reads uint64) string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
	var parts []string
	for _, name := range names {
		// "client|caching" is CLIENT CACHING (and a | would end a table cell).
		parts = append(parts, fmt.Sprintf("%s %.3f", strings.ToUpper(strings.ReplaceAll(name, "|", " ")), float64(m[name])/float64(max(reads, 1))))
	}
	return strings.Join(parts, ", ")
}
