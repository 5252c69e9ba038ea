package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/ziplinekv/zipline"
)

// demoKeys is every key the demo writes on its server, declared before the
// first write: so that, on a server given with -addr, the demo can first
// check that none of them holds data already, and delete all of them at
// the end, however the run ends. Sections still delete their own keys as
// they go (their memory figures need a clean server); this is what catches
// an error, a Ctrl-C or a section that forgot.
type demoKeys struct {
	sets     []keySet
	prefixes []string // namespaces the demo owns whole: every key under them is the demo's
}

// keySet is n keys named name(0), …, name(n-1).
type keySet struct {
	n    int
	name func(i int) string
}

// add declares the keys name(0), …, name(n-1).
func (k *demoKeys) add(n int, name func(i int) string) {
	k.sets = append(k.sets, keySet{n, name})
}

// addPrefix declares every key whose name starts with prefix.
func (k *demoKeys) addPrefix(prefix string) { k.prefixes = append(k.prefixes, prefix) }

// chunk is how many keys one EXISTS or UNLINK names.
const chunk = 1000

// each calls f with the declared keys, chunk at a time, until f fails.
func (k *demoKeys) each(f func(names []string) error) error {
	names := make([]string, 0, chunk)
	for _, s := range k.sets {
		for i := range s.n {
			if names = append(names, s.name(i)); len(names) == chunk {
				if err := f(names); err != nil {
					return err
				}
				names = names[:0]
			}
		}
	}
	if len(names) > 0 {
		return f(names)
	}
	return nil
}

// count returns how many keys are declared by name (prefixes aside).
func (k *demoKeys) count() int {
	n := 0
	for _, s := range k.sets {
		n += s.n
	}
	return n
}

// scanPrefix calls f with the keys under prefix that exist, a page at a
// time, until f fails or returns false.
func scanPrefix(ctx context.Context, c *zipline.Client, prefix string, f func(names []string) (bool, error)) error {
	var page []string
	for key, err := range c.Scan(ctx, zipline.ScanOptions{Match: globEscape(prefix) + "*", Count: chunk}) {
		if err != nil {
			return err
		}
		if page = append(page, key); len(page) == chunk {
			more, err := f(page)
			if err != nil || !more {
				return err
			}
			page = page[:0]
		}
	}
	if len(page) > 0 {
		_, err := f(page)
		return err
	}
	return nil
}

// globEscape quotes the characters SCAN's MATCH gives a meaning to.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkUnused returns an error if the server already holds any of the
// keys: the demo would overwrite them, then delete them.
func (k *demoKeys) checkUnused(ctx context.Context, c *zipline.Client, addr string) error {
	var named int64
	err := k.each(func(names []string) error {
		n, err := c.Exists(ctx, names...)
		named += n
		return err
	})
	var found []string
	if named > 0 {
		found = append(found, fmt.Sprintf("%d of the keys it names", named))
	}
	for _, p := range k.prefixes {
		if err != nil {
			break
		}
		err = scanPrefix(ctx, c, p, func(names []string) (bool, error) {
			found = append(found, fmt.Sprintf("keys under %s such as %q", p, names[0]))
			return false, nil
		})
	}
	if err != nil {
		return fmt.Errorf("demo: checking that %s holds none of the demo's keys: %w", addr, err)
	}
	if len(found) > 0 {
		return fmt.Errorf("demo: %s already holds keys the demo writes (%s): it would overwrite them, then delete them. "+
			"Run it against an empty server, or without -addr to let it start its own. It writes %s",
			addr, strings.Join(found, "; "), k.describe())
	}
	return nil
}

// describe names the keys for messages.
func (k *demoKeys) describe() string {
	var parts []string
	for _, s := range k.sets {
		switch s.n {
		case 1:
			parts = append(parts, s.name(0))
		default:
			parts = append(parts, fmt.Sprintf("%s … %s", s.name(0), s.name(s.n-1)))
		}
	}
	for _, p := range k.prefixes {
		parts = append(parts, p+"*")
	}
	return strings.Join(parts, ", ")
}

// remove deletes every declared key and every key under the declared
// prefixes, and returns how many existed.
func (k *demoKeys) remove(ctx context.Context, c *zipline.Client) (int64, error) {
	var removed int64
	err := k.each(func(names []string) error {
		n, err := c.Unlink(ctx, names...)
		removed += n
		return err
	})
	if err != nil {
		return removed, err
	}
	for _, p := range k.prefixes {
		// Deleting while scanning is safe: SCAN still returns every key
		// present from start to end.
		err := scanPrefix(ctx, c, p, func(names []string) (bool, error) {
			n, err := c.Unlink(ctx, names...)
			removed += n
			return true, err
		})
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}
