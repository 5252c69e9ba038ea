package layout

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline"
)

// A command is one Redis command, as Batch.Do takes it.
type command []any

// writeCommands returns the commands that store enc for l, with a TTL if
// ttl > 0. For an oversize value the plain key is written before the marker,
// so that a reader never finds the marker without the value behind it.
func (s *Store) writeCommands(l location, enc []byte, ttl time.Duration) ([]command, error) {
	if l.bucket == "" || !s.fits(enc) {
		set := command{"SET", l.plain, enc}
		if ttl > 0 {
			set = append(set, "PX", ttl.Milliseconds())
		}
		if l.bucket == "" {
			return []command{set}, nil
		}
		s.oversize.Add(1)
		return []command{set, {"HSET", l.bucket, l.field, oversizeMarker}}, nil
	}
	if ttl <= 0 {
		return []command{{"HSET", l.bucket, l.field, enc}}, nil
	}
	ms := ttl.Milliseconds()
	switch {
	case s.fieldTTL.hsetex:
		return []command{{"HSETEX", l.bucket, "PX", ms, "FIELDS", 1, l.field, enc}}, nil
	case s.fieldTTL.hpexpire:
		return []command{{"HSET", l.bucket, l.field, enc}, {"HPEXPIRE", l.bucket, ms, "FIELDS", 1, l.field}}, nil
	case s.ns.BucketTTL > 0:
		return []command{{"HSET", l.bucket, l.field, enc}, {"PEXPIRE", l.bucket, s.ns.BucketTTL.Milliseconds(), "NX"}}, nil
	}
	return nil, ErrNoFieldTTL
}

// deleteCommands returns the commands that remove l's value. The first
// one's reply tells whether the key existed: HDEL for a bucket field (an
// oversize marker counts), UNLINK for a plain key.
func deleteCommands(l location) []command {
	if l.bucket == "" {
		return []command{{"UNLINK", l.plain}}
	}
	return []command{{"HDEL", l.bucket, l.field}, {"UNLINK", l.plain}}
}

// read is a key's queued read: the futures of its commands, resolved after
// the batch runs.
type read struct {
	s      *Store
	l      location
	field  *zipline.Future[[]byte] // HGET of the bucket field
	plain  *zipline.Future[[]byte] // GET of the plain key
	old    *read                   // the same key in the layout being migrated from
	loaded bool                    // plain was queued with field
}

// queueReads queues a full read (oversize values included) of each key.
func (s *Store) queueReads(b *zipline.Batch, keys []string) ([]*read, error) {
	reads := make([]*read, len(keys))
	for i, k := range keys {
		var err error
		if reads[i], err = s.queueRead(b, k, true); err != nil {
			return nil, err
		}
	}
	return reads, nil
}

// readValues resolves reads queued by queueReads, once their batch ran: a
// missing key reads as nil.
func readValues(reads []*read) ([][]byte, error) {
	out := make([][]byte, len(reads))
	for i, r := range reads {
		v, err := r.value()
		if err != nil && !errors.Is(err, zipline.Nil) {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// queueRead queues the commands that read key. With full, an oversize
// value's plain key is read in the same round trip; otherwise only when the
// bucket says so (see resolve).
func (s *Store) queueRead(b *zipline.Batch, key string, full bool) (*read, error) {
	l, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	r := &read{s: s, l: l}
	if l.bucket != "" {
		r.field = b.HGet(l.bucket, l.field)
		if full {
			r.plain = b.Get(l.plain)
			r.loaded = true
		}
	} else {
		r.plain = b.Get(l.plain)
		r.loaded = true
	}
	if s.old != nil {
		if r.old, err = s.old.queueRead(b, key, true); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// errNeedPlain means a bucket holds the oversize marker and the plain key
// was not read in the same round trip.
var errNeedPlain = errors.New("layout: value stored as a plain key")

// resolve returns the stored bytes and the Store whose layout held them,
// Nil if the key is missing, or errNeedPlain.
func (r *read) resolve() ([]byte, *Store, error) {
	v, err := r.resolveHere()
	if errors.Is(err, zipline.Nil) && r.old != nil {
		v, err = r.old.resolveHere()
		return v, r.old.s, err
	}
	return v, r.s, err
}

func (r *read) resolveHere() ([]byte, error) {
	if r.field != nil {
		v, err := valueBytes(r.field)
		if err != nil || !bytes.Equal(v, oversizeMarker) {
			return v, err
		}
		if !r.loaded {
			return nil, errNeedPlain
		}
	}
	return valueBytes(r.plain)
}

// value resolves and decodes, with the codec of the layout that answered.
func (r *read) value() ([]byte, error) {
	v, from, err := r.resolve()
	if err != nil {
		return nil, err
	}
	return from.decode(v)
}

func valueBytes(f *zipline.Future[[]byte]) ([]byte, error) { return f.Result() }

// groupScript runs a list of commands atomically: its arguments are, for
// each command, the number of words and then the words. It returns each
// command's reply. Migration writes use it so that writing the new layout
// and deleting the old copy can never be split, in a Batch as anywhere.
const groupScript = `local out, i = {}, 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  out[#out+1] = redis.call(unpack(ARGV, i+1, i+n))
  i = i + n + 1
end
return out`

// groupArgs builds EVAL's arguments for running cmds with groupScript. The
// keys each command touches are declared, as a cluster would need.
func groupArgs(cmds []command) []any {
	var keys []any
	n := 0
	for _, c := range cmds {
		keys = append(keys, c[1])
		n += 1 + len(c)
	}
	args := make([]any, 0, 3+len(keys)+n)
	args = append(args, "EVAL", groupScript, len(keys))
	args = append(args, keys...)
	for _, c := range cmds {
		args = append(args, strconv.Itoa(len(c)))
		args = append(args, c...)
	}
	return args
}
