package cache

import (
	"encoding/binary"
	"time"
)

// The first byte of a stored entry: its format, and whether it holds a
// value or a cached "not found". Neither is 0x00, the first byte of a
// compressed envelope, so a stored entry is never mistaken for one.
const (
	formatValue    = 0xC1
	formatNotFound = 0xC2
)

// entry is one stored value, or a cached "not found".
type entry struct {
	notFound bool
	// expiry is when the entry stops being fresh, to the millisecond.
	expiry time.Time
	// delta is how long the load that produced it took: XFetch's head start.
	delta time.Duration
	// payload is the codec's bytes; empty for a "not found". Shared by every
	// caller a flight hands the entry to, so never modified.
	payload []byte
	// decoded is the entry as its store kept it decoded (a *kept[T]), when
	// the store keeps decoded values; then payload is empty.
	decoded any
}

// encode returns the stored form: format byte, expiry in Unix milliseconds
// and delta in microseconds (both uvarints), payload.
func (e entry) encode() []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(e.payload))
	if e.notFound {
		b = append(b, formatNotFound)
	} else {
		b = append(b, formatValue)
	}
	b = binary.AppendUvarint(b, uint64(max(e.expiry.UnixMilli(), 0)))
	b = binary.AppendUvarint(b, uint64(max(e.delta/time.Microsecond, 0)))
	return append(b, e.payload...)
}

// decodeEntry parses a stored entry. It reports false for anything that is
// not one: the caller treats that as a miss.
func decodeEntry(b []byte) (entry, bool) {
	if len(b) < 3 || (b[0] != formatValue && b[0] != formatNotFound) {
		return entry{}, false
	}
	e := entry{notFound: b[0] == formatNotFound}
	rest := b[1:]
	ms, n := binary.Uvarint(rest)
	if n <= 0 {
		return entry{}, false
	}
	rest = rest[n:]
	us, n := binary.Uvarint(rest)
	if n <= 0 || ms > 1<<62 || us > 1<<62 {
		return entry{}, false
	}
	rest = rest[n:]
	if e.notFound && len(rest) > 0 {
		return entry{}, false
	}
	e.expiry = time.UnixMilli(int64(ms))
	e.delta = time.Duration(us) * time.Microsecond
	e.payload = rest
	return e, true
}
