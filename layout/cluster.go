package layout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ziplinekv/zipline"
)

// This file holds what a Redis or Valkey Cluster changes for a namespace:
// detecting one, refusing stored prefixes whose braces would split a
// bucket from its oversize keys, the names of the sets that record the
// keys a migration has touched (its tombstones, see split.go), and
// scanning every primary.

// isCluster reports whether c's server is a cluster node (INFO cluster), so
// that a Client given one node's address (Options.Cluster off) is treated
// as one too: its scripts are refused if they join slots either way.
func isCluster(ctx context.Context, c *zipline.Client) (bool, error) {
	info, err := c.Info(ctx, "cluster")
	if err != nil {
		var se *zipline.ServerError
		if errors.As(err, &se) {
			return false, nil // INFO refused (some managed services): no cluster support assumed
		}
		return false, fmt.Errorf("layout: INFO cluster: %w", err)
	}
	return info["cluster_enabled"] == "1", nil
}

// checkHashTag refuses, on a cluster, a stored prefix whose braces would
// give a bucket and the keys that go with it (oversize values, tombstone
// sets) different hash slots. Those names are the prefix followed by
// "#...{<bucket key>}...": with no brace in the prefix, the hash tag is
// the bucket key; with a complete, non-empty hash tag in the prefix
// ("{users}:"), every name of the namespace hashes to that tag. Anything
// else, such as "u{:" or "a}b" or "{}x", makes the server hash a part of
// one name and the whole of another.
func checkHashTag(prefix string) error {
	open := strings.IndexByte(prefix, '{')
	if open < 0 {
		if strings.IndexByte(prefix, '}') < 0 {
			return nil
		}
		return fmt.Errorf("layout: on a cluster, stored prefix %q has a '}' without a hash tag: "+
			"a bucket and its oversize keys would hash to different slots; use no braces, or a whole hash tag such as \"{users}:\"", prefix)
	}
	if end := strings.IndexByte(prefix[open+1:], '}'); end > 0 {
		return nil
	}
	return fmt.Errorf("layout: on a cluster, stored prefix %q has a '{' that does not open a non-empty hash tag within it: "+
		"a bucket and its oversize keys would hash to different slots; use no braces, or a whole hash tag such as \"{users}:\"", prefix)
}

// checkCluster is what New checks on a cluster: the stored prefixes of
// layouts whose scripts join several keys (buckets, or the target of a
// migration, with its tombstone sets), and that a migration's target has
// names no application key can take for those sets.
func (ns *Namespace) checkCluster() error {
	if ns.Buckets != nil || ns.MigrateFrom != nil {
		if err := checkHashTag(ns.storedPrefix()); err != nil {
			return err
		}
	}
	if old := ns.MigrateFrom; old != nil {
		if old.Buckets != nil {
			if err := checkHashTag(old.storedPrefix()); err != nil {
				return fmt.Errorf("layout: MigrateFrom: %w", err)
			}
		}
		if ns.ZipAs == "" && ns.Buckets == nil {
			// Without zipping or buckets every name under Prefix is an
			// application key's, so the tombstone sets would have none.
			return errors.New("layout: on a cluster, a namespace that migrates needs ZipAs or Buckets: " +
				"its tombstones are kept under names that no application key can take")
		}
	}
	return nil
}

// touchedMarker follows the bucket marker in the names of tombstone sets:
// "<stored>#!{...}". No application key's stored name starts with it
// (zipped tails escape a leading '#'; bucketed namespaces without ZipAs
// refuse such keys), no bucket (base62) nor oversize key ("#{") either.
const touchedMarker = "#!"

// touchedKey returns the set that records whether l was touched by a
// write with a TTL or a deletion during a cluster migration, and l's
// member in it. A bucket's set is "<stored>#!{<bucket>}" with the field as
// member, in the bucket's slot. Keys stored as plain keys share one set per
// hash slot, "<stored>#!{<tag>}" where tag is a short name of that slot, with
// the stored name as member.
func (s *Store) touchedKey(l location) (key, member string) {
	if l.bucket != "" {
		return s.stored + touchedMarker + "{" + l.bucket + "}", l.field
	}
	return s.stored + touchedMarker + "{" + slotTags()[keySlot(l.plain)] + "}", l.plain
}

// isTouchedName reports whether a stored name (without the stored prefix)
// is a tombstone set's.
func isTouchedName(rest string) bool { return strings.HasPrefix(rest, touchedMarker) }

// keySlot returns a key's cluster hash slot: CRC16 (XMODEM) of the key, or
// of its hash tag (the text between the first '{' and the next '}', when
// not empty), modulo 16384. The client computes it too but does not export
// it.
func keySlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc & (slotCount - 1))
}

const slotCount = 16384

// slotTags returns, for each hash slot, the shortest base62 name (in
// counting order) that hashes to it: the hash tag of that slot's
// tombstone set for plain keys. It is computed once, in a few
// milliseconds (some 170,000 CRCs of three-character names).
var slotTags = sync.OnceValue(func() *[slotCount]string {
	var t [slotCount]string
	left := slotCount
	for n := uint64(0); left > 0; n++ {
		name := string(appendBase62(nil, n))
		if slot := keySlot(name); t[slot] == "" {
			t[slot] = name
			left--
		}
	}
	return &t
})

// scanStored calls page with the stored names of this layout (SCAN MATCH
// its prefix), count at a time, from cursor on a single server. next is
// the cursor to resume from after that page, "0" after the last. On a
// cluster it walks every primary (Client.Scan) and cannot resume: next is
// "" until the last page; a cursor other than "" or "0" is refused. page
// returns false to stop.
func (s *Store) scanStored(ctx context.Context, cursor string, count int64, page func(names []string, next string) (bool, error)) error {
	match := globEscape(s.stored) + "*"
	inner := page
	page = func(names []string, next string) (bool, error) {
		// The namespace's own keys (dictionaries, bucket size) are no values.
		kept := names[:0]
		for _, n := range names {
			if !isMetaName(n[len(s.stored):]) {
				kept = append(kept, n)
			}
		}
		return inner(kept, next)
	}
	if s.cluster {
		if cursor != "" && cursor != "0" {
			return fmt.Errorf("layout: cannot resume from cursor %q on a cluster: start again from the beginning "+
				"(keys already moved are not moved again)", cursor)
		}
		var names []string
		for name, err := range s.c.Scan(ctx, zipline.ScanOptions{Match: match, Count: count}) {
			if err != nil {
				return err
			}
			if names = append(names, name); int64(len(names)) >= max(count, 1) {
				more, err := page(names, "")
				if err != nil || !more {
					return err
				}
				names = nil
			}
		}
		_, err := page(names, "0")
		return err
	}
	if cursor == "" {
		cursor = "0"
	}
	for {
		args := []any{"SCAN", cursor, "MATCH", match}
		if count > 0 {
			args = append(args, "COUNT", count)
		}
		v, err := s.c.Do(ctx, args...)
		if err != nil {
			return err
		}
		reply, err := v.AsSlice()
		if err != nil || len(reply) != 2 {
			return errors.Join(err, errors.New("layout: malformed SCAN reply"))
		}
		cursor, _ = reply[0].AsString()
		names, _ := reply[1].AsStrings()
		more, err := page(names, cursor)
		if err != nil || !more || cursor == "0" {
			return err
		}
	}
}

// Sweep deletes the tombstones that a migration on a cluster left in this
// layout (see "Migration on a cluster" in the package documentation) and
// returns how many sets it deleted. Run it once the migration is complete
// (a Migrate pass that moved nothing and replaced nothing) and no process
// runs with MigrateFrom any longer: a tombstone is what stops a process
// that read an old value before it was deleted from copying it into the
// new layout. It is a no-op on a single server, where no tombstones are
// written, and safe to run again.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	deleted := 0
	match := globEscape(s.stored+touchedMarker) + "*"
	var names []string
	flush := func() error {
		if len(names) == 0 {
			return nil
		}
		n, err := s.c.Unlink(ctx, names...)
		deleted += int(n)
		names = names[:0]
		return err
	}
	for name, err := range s.c.Scan(ctx, zipline.ScanOptions{Match: match, Count: 1000}) {
		if err != nil {
			return deleted, err
		}
		if names = append(names, name); len(names) == 500 {
			if err := flush(); err != nil {
				return deleted, err
			}
		}
	}
	return deleted, flush()
}
