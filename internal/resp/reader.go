package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Default parser limits. They are far above anything a healthy server sends
// and exist so that a corrupt or hostile stream fails cleanly.
const (
	// DefaultMaxBulkLen matches Redis's own proto-max-bulk-len default.
	DefaultMaxBulkLen = 512 << 20
	// DefaultMaxAggregateLen bounds the element count of one array, set or
	// map (a map counts each key and each value).
	DefaultMaxAggregateLen = 1 << 24
	// DefaultMaxDepth bounds nesting; real replies (XREAD, CLUSTER SHARDS)
	// stay under 8.
	DefaultMaxDepth = 64
	// DefaultBufferSize is the size a Reader's buffer grows to while
	// replies come faster than it is read (see NewReader).
	DefaultBufferSize = 16 << 10
	// firstBufferSize is a Reader's buffer before it has seen a burst, and
	// after Shrink: a connection that answers one small request at a time,
	// or none, holds no more.
	firstBufferSize = 512
	// maxLineLen bounds a simple string, error or number line.
	maxLineLen = 64 << 10
	// exactAllocMax is the largest bulk string allocated in one piece from its
	// declared length alone; beyond it, memory grows only as bytes arrive, so a
	// lying length prefix cannot make us allocate memory the peer never fills.
	exactAllocMax = 1 << 20
	// maxAggregatePrealloc plays the same role for element slices.
	maxAggregatePrealloc = 1024
	// maxSkip is the largest announced size the Reader skips to stay in
	// step when it exceeds a limit (see Oversize): 8 times the largest
	// string Redis stores by default. Anything larger is not taken for a
	// real reply: the stream is treated as corrupt.
	maxSkip = 4 << 30
)

// What a LimitError says was exceeded.
const (
	whatBulk      = "bulk length"
	whatAggregate = "aggregate length"
)

// Limits bound what one reply may contain. Zero fields take the defaults.
type Limits struct {
	MaxBulkLen      int64 // bytes in one bulk string, error or verbatim string
	MaxAggregateLen int64 // elements in one aggregate
	MaxDepth        int   // nesting of aggregates
}

func (l Limits) withDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = DefaultMaxBulkLen
	}
	if l.MaxAggregateLen <= 0 {
		l.MaxAggregateLen = DefaultMaxAggregateLen
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// ErrProtocol is wrapped by every error caused by bytes that are not valid
// RESP. After it the stream is out of step and the connection must be closed.
var ErrProtocol = errors.New("resp: protocol error")

// LimitError reports a reply that exceeds one of the Reader's Limits. When
// ReadValue returns it, the stream is out of step, as after a protocol
// error; a limit on an announced size (bulk or aggregate length) instead
// yields an Oversize value and keeps the stream in step.
type LimitError struct {
	What  string // "bulk length", "aggregate length", "nesting depth", "line length"
	Size  int64
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("resp: %s %d exceeds limit %d", e.What, e.Size, e.Limit)
}

func protocolErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// Reader parses replies from an io.Reader through its own buffer. It is not
// safe for concurrent use; a connection has exactly one reader loop.
type Reader struct {
	rd     io.Reader
	buf    []byte
	r, w   int // unread bytes are buf[r:w]
	limits Limits
	// most is the size the buffer grows to for bursts; filled reports that
	// the last read took all the room the buffer had, the sign of one.
	most   int
	filled bool
	// inValue is set once ReadValue has consumed the first line of a
	// reply: from then on an error leaves the stream mid-reply.
	inValue bool
	// slab, while a run of bulk strings held whole in the buffer is read
	// (an aggregate's elements, or the next replies ShareNext was told
	// of), is one allocation sized for all their bytes, which readN
	// carves them from; nil once they are all read.
	slab []byte
}

// NewReader returns a Reader enforcing lim whose buffer grows with use:
// it starts small, doubles each time a read fills it, up to size bytes
// (DefaultBufferSize if size <= 0), and only a line longer than that
// grows it further. Shrink gives the room back. A connection then holds
// the buffer its traffic needs: 16 KiB lets one read bring a burst of
// pipelined replies, and an idle one needs next to nothing.
func NewReader(rd io.Reader, size int, lim Limits) *Reader {
	if size <= 0 {
		size = DefaultBufferSize
	}
	return &Reader{rd: rd, buf: make([]byte, min(size, firstBufferSize)), most: size, limits: lim.withDefaults()}
}

// Shrink drops the buffer, if nothing is buffered and no value is being
// read: the pipe calls it on a connection found idle. The next read starts
// a buffer of the first size again. It reports whether it dropped one.
func (r *Reader) Shrink() bool {
	if r.r != r.w || r.inValue || r.slab != nil || r.buf == nil {
		return false
	}
	r.buf, r.r, r.w, r.filled = nil, 0, 0, false // the next fill makes a first buffer
	return true
}

// Reset makes the Reader read from rd, dropping any buffered bytes.
func (r *Reader) Reset(rd io.Reader) {
	r.rd = rd
	r.r, r.w = 0, 0
}

// Buffered reports how many bytes are waiting in the buffer. The pipe uses
// it to tell a burst of replies, all already read, from a single one.
func (r *Reader) Buffered() int { return r.w - r.r }

// ReplyBuffered reports whether the first byte of a next value is buffered
// and starts neither a RESP3 push nor an attribute: whatever follows is the
// reply to some request, not out-of-band data. It consumes nothing.
func (r *Reader) ReplyBuffered() bool {
	if r.r == r.w {
		return false
	}
	t := Type(r.buf[r.r])
	return t != Push && t != attribute
}

// ReadValue parses the next complete reply into v. Attributes (RESP3 "|")
// are read and dropped. Any error other than a server error reply (which is
// a Value, not an error) means the stream can no longer be trusted.
func (r *Reader) ReadValue(v *Value) error {
	err := r.readValue(v, 0)
	r.inValue = false
	return err
}

// Between reports whether the Reader stands between two replies: nothing
// of the next one consumed or buffered. While ReadValue waits for the
// first bytes of a reply, the underlying reader may then fail it with an
// error that loses nothing: ReadValue returns that error, and the next
// ReadValue starts the reply afresh. The pipe hands the reading of a
// connection from one goroutine to another this way.
func (r *Reader) Between() bool { return !r.inValue && r.r == r.w }

func (r *Reader) readValue(v *Value, depth int) error {
	for {
		line, err := r.readLine()
		if err != nil {
			return err
		}
		r.inValue = true
		if len(line) == 0 {
			return protocolErrorf("empty line")
		}
		typ, body := Type(line[0]), line[1:]
		switch typ {
		case SimpleString, SimpleError:
			// A CR inside the line is not RESP: it is what a stream that
			// slipped out of step looks like.
			if bytes.IndexByte(body, '\r') >= 0 {
				return protocolErrorf("carriage return inside a %s line", typ)
			}
			if typ == SimpleString {
				*v = Value{typ: typ, str: r.simpleString(body)}
			} else {
				*v = Value{typ: typ, str: bytes.Clone(body)}
			}
			return nil
		case BigNumber:
			if !isDecimal(body) {
				return protocolErrorf("bad big number (%d bytes)", len(body))
			}
			*v = Value{typ: typ, str: bytes.Clone(body)}
			return nil
		case Integer:
			n, err := parseInt(body)
			if err != nil {
				return err
			}
			*v = Value{typ: typ, num: n}
			return nil
		case Null:
			if len(body) != 0 {
				return protocolErrorf("null with a payload of %d bytes", len(body))
			}
			*v = Value{typ: Null}
			return nil
		case Boolean:
			if len(body) != 1 || (body[0] != 't' && body[0] != 'f') {
				return protocolErrorf("bad boolean (%d bytes)", len(body))
			}
			*v = Value{typ: typ}
			if body[0] == 't' {
				v.num = 1
			}
			return nil
		case Double:
			f, err := parseDouble(body)
			if err != nil {
				return err
			}
			*v = Value{typ: typ, num: int64(math.Float64bits(f))}
			return nil
		case BulkString, BlobError, Verbatim:
			return r.readBlob(v, typ, body)
		case Array, Set, Push, Map:
			return r.readAggregate(v, typ, body, depth)
		case attribute:
			// An attribute is a map that precedes the real reply. Parse it
			// (bounded like any map) so the stream stays aligned, then drop it.
			var skip Value
			if err := r.readAggregate(&skip, Map, body, depth); err != nil {
				return err
			}
			continue
		default:
			return protocolErrorf("unknown reply type 0x%02x", line[0])
		}
	}
}

func (r *Reader) simpleString(b []byte) []byte {
	for _, s := range internedSimple {
		if bytes.Equal(b, s) {
			return s
		}
	}
	return bytes.Clone(b)
}

func (r *Reader) readBlob(v *Value, typ Type, header []byte) error {
	n, err := parseInt(header)
	if err != nil {
		return err
	}
	if n < 0 {
		if n == -1 && typ == BulkString { // RESP2 null bulk string
			*v = Value{typ: Null}
			return nil
		}
		return protocolErrorf("negative length %d", n)
	}
	if n > r.limits.MaxBulkLen {
		if n > maxSkip {
			return &LimitError{What: whatBulk, Size: n, Limit: r.limits.MaxBulkLen}
		}
		if err := r.discard(n + 2); err != nil {
			return err
		}
		*v = Value{typ: Oversize, num: n, str: []byte(whatBulk)}
		return nil
	}
	b, err := r.readN(int(n))
	if err != nil {
		return err
	}
	if err := r.expectCRLF(); err != nil {
		return err
	}
	*v = Value{typ: typ, str: b}
	if typ == Verbatim {
		if len(b) < 4 || b[3] != ':' {
			return protocolErrorf("verbatim string without format")
		}
		v.num = int64(b[0])<<16 | int64(b[1])<<8 | int64(b[2])
		v.str = b[4:]
	}
	return nil
}

func (r *Reader) readAggregate(v *Value, typ Type, header []byte, depth int) error {
	n, err := parseInt(header)
	if err != nil {
		return err
	}
	if n < 0 {
		if n == -1 && typ == Array { // RESP2 null array
			*v = Value{typ: Null}
			return nil
		}
		return protocolErrorf("negative length %d", n)
	}
	if typ == Map {
		if n > maxSkip {
			return &LimitError{What: whatAggregate, Size: n, Limit: r.limits.MaxAggregateLen}
		}
		n *= 2
	}
	if depth+1 > r.limits.MaxDepth {
		return &LimitError{What: "nesting depth", Size: int64(depth + 1), Limit: int64(r.limits.MaxDepth)}
	}
	if n > r.limits.MaxAggregateLen {
		if n > maxSkip {
			return &LimitError{What: whatAggregate, Size: n, Limit: r.limits.MaxAggregateLen}
		}
		if err := r.skipElems(n, depth+1); err != nil {
			return err
		}
		*v = Value{typ: Oversize, num: n, str: []byte(whatAggregate)}
		return nil
	}
	elems := make([]Value, 0, min(n, maxAggregatePrealloc))
	if r.slab == nil {
		// An aggregate of bulk strings in the buffer (a pub/sub message,
		// most MGET and HGETALL replies): one allocation holds them all,
		// rather than one each. Holding one of them keeps the others'
		// bytes alive: no more than the reply itself.
		if r.shareBulk(n) {
			defer func() { r.slab = nil }() // also when reading them fails
		}
	}
	for i := int64(0); i < n; i++ {
		elems = append(elems, Value{})
		e := &elems[len(elems)-1]
		if err := r.readValue(e, depth+1); err != nil {
			return err
		}
		if e.typ == Oversize {
			// One element over a limit makes the whole reply oversize:
			// skip the rest so the stream stays in step.
			if err := r.skipElems(n-i-1, depth+1); err != nil {
				return err
			}
			*v = *e
			return nil
		}
	}
	*v = Value{typ: typ, elems: elems}
	return nil
}

// ShareNext lets the next n values share one allocation, as far as they
// are bulk strings that the buffer already holds whole: the replies of one
// pipelined batch, which reach their caller together, as an aggregate's
// elements do. Holding one of them keeps the others' bytes alive. The pipe
// calls it between values with the number of replies its next call still
// awaits; it does nothing while an earlier run is being read.
func (r *Reader) ShareNext(n int) {
	if n > 1 && r.slab == nil && !r.inValue { // inlined: a lone reply costs a compare
		r.shareBulk(int64(n))
	}
}

// shareBulk sizes the slab for the leading run of the next n values that
// are bulk strings (or RESP2 nulls) the buffer holds whole, when that run
// has two strings or more, and reports whether it did. It reads nothing:
// a value of any other kind, including a malformed header, ends the run
// and is left to the parser.
func (r *Reader) shareBulk(n int64) bool {
	if n < 2 {
		return false
	}
	size, strs := 0, 0
	p := r.r
	for ; n > 0; n-- {
		if p >= r.w || r.buf[p] != '$' {
			break
		}
		nl := bytes.IndexByte(r.buf[p:r.w], '\n')
		if nl < 3 || r.buf[p+nl-1] != '\r' {
			break
		}
		ln, err := parseInt(r.buf[p+1 : p+nl-1])
		if err != nil || ln < -1 || ln > r.limits.MaxBulkLen {
			break
		}
		end := p + nl + 1
		if ln >= 0 {
			end += int(ln) + 2
		}
		if end > r.w {
			break
		}
		p = end
		if ln > 0 {
			size += int(ln)
			strs++
		}
	}
	if strs < 2 {
		return false
	}
	r.slab = make([]byte, 0, size)
	return true
}

// skipElems reads n values at the given depth and drops them, allocating
// nothing: the rest of a reply that is over a limit.
func (r *Reader) skipElems(n int64, depth int) error {
	for ; n > 0; n-- {
		if err := r.skipValue(depth); err != nil {
			return err
		}
	}
	return nil
}

// skipValue reads one value and drops it. Nesting is still bounded by
// MaxDepth, and announced sizes by maxSkip; the bytes themselves arrive
// only as fast as the peer sends them, which the connection's I/O timeout
// bounds.
func (r *Reader) skipValue(depth int) error {
	for {
		line, err := r.readLine()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return protocolErrorf("empty line")
		}
		typ, body := Type(line[0]), line[1:]
		switch typ {
		case SimpleString, SimpleError, Integer, Null, Boolean, Double, BigNumber:
			return nil
		case BulkString, BlobError, Verbatim:
			n, err := parseInt(body)
			if err != nil {
				return err
			}
			if n == -1 && typ == BulkString {
				return nil
			}
			if n < 0 || n > maxSkip {
				return protocolErrorf("bad length %d", n)
			}
			return r.discard(n + 2)
		case Array, Set, Push, Map, attribute:
			n, err := parseInt(body)
			if err != nil {
				return err
			}
			if n == -1 && typ == Array {
				return nil
			}
			if n < 0 || n > maxSkip {
				return protocolErrorf("bad length %d", n)
			}
			if typ == Map || typ == attribute {
				n *= 2
			}
			if depth+1 > r.limits.MaxDepth {
				return &LimitError{What: "nesting depth", Size: int64(depth + 1), Limit: int64(r.limits.MaxDepth)}
			}
			if err := r.skipElems(n, depth+1); err != nil {
				return err
			}
			if typ != attribute {
				return nil
			}
			// An attribute precedes the value it describes: skip that too.
		default:
			return protocolErrorf("unknown reply type 0x%02x", line[0])
		}
	}
}

// discard drops the next n bytes of the stream, through the buffer.
func (r *Reader) discard(n int64) error {
	for {
		if avail := int64(r.w - r.r); n <= avail {
			r.r += int(n)
			return nil
		} else {
			n -= avail
			r.r, r.w = 0, 0
		}
		if err := r.fill(); err != nil {
			return unexpectedEOF(err)
		}
	}
}

// readLine returns the next line without its CRLF. The slice aliases the
// buffer and is valid only until the next read.
func (r *Reader) readLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.buf[r.r:r.w], '\n'); i >= 0 {
			line := r.buf[r.r : r.r+i+1]
			r.r += i + 1
			if len(line) < 2 || line[len(line)-2] != '\r' {
				return nil, protocolErrorf("line not terminated by CRLF")
			}
			return line[:len(line)-2], nil
		}
		if r.w-r.r >= maxLineLen {
			return nil, &LimitError{What: "line length", Size: int64(r.w - r.r), Limit: maxLineLen}
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more bytes, first moving unread bytes to the front and growing
// the buffer: doubled if it is full (up to what a maximal line needs), or
// if the last read filled it, up to most.
func (r *Reader) fill() error {
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	switch {
	case r.buf == nil:
		r.buf = make([]byte, min(r.most, firstBufferSize))
	case r.w == len(r.buf):
		r.buf = append(r.buf, make([]byte, len(r.buf))...)[:2*len(r.buf)]
	case r.filled && len(r.buf) < r.most:
		b := make([]byte, min(2*len(r.buf), r.most))
		copy(b, r.buf[:r.w])
		r.buf = b
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.filled = n > 0 && r.w+n == len(r.buf)
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// emptyBytes is every empty string's bytes.
var emptyBytes = make([]byte, 0)

// readN returns the next n bytes in a slice of their own: a new one, or
// the next n bytes of the slab, capped so that appending to it never
// writes over its neighbour.
func (r *Reader) readN(n int) ([]byte, error) {
	if n == 0 {
		// An empty string is not a null: its slice is empty, never nil,
		// whatever the slab holds, so that callers can keep "" and
		// "missing" apart (MGET's nil elements). A zero-capacity slice
		// is safe to share: appending to it allocates.
		return emptyBytes, nil
	}
	if n > r.w-r.r && n+2 <= len(r.buf)/2 {
		// A string (with its CRLF) of at most half the buffer, cut off by
		// the end of what was read: read on into the buffer rather than
		// read only its remainder into an allocation of its own, as larger
		// strings are, without a copy. The same system call then brings
		// whatever arrived after it, usually the next replies; reading the
		// remainder alone cost a read per buffer, half the reads of GET
		// 2 KiB under load (bench/RESULTS.md#client-ab).
		for r.w-r.r < n+2 {
			if err := r.fill(); err != nil {
				return nil, unexpectedEOF(err)
			}
		}
	}
	if l := len(r.slab); n <= cap(r.slab)-l && n <= r.w-r.r {
		r.slab = append(r.slab, r.buf[r.r:r.r+n]...)
		r.r += n
		b := r.slab[l : l+n : l+n]
		if len(r.slab) == cap(r.slab) {
			r.slab = nil // every string of the run is read
		}
		return b, nil
	}
	if n <= r.w-r.r {
		b := bytes.Clone(r.buf[r.r : r.r+n])
		r.r += n
		return b, nil
	}
	b := make([]byte, 0, min(n, exactAllocMax))
	b = append(b, r.buf[r.r:r.w]...)
	r.r, r.w = 0, 0
	for len(b) < n {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the growth
		}
		end := min(cap(b), n)
		m, err := r.rd.Read(b[len(b):end])
		b = b[:len(b)+m]
		if m == 0 {
			if err == nil {
				err = io.ErrNoProgress
			}
			return nil, unexpectedEOF(err)
		}
	}
	return b, nil
}

func (r *Reader) expectCRLF() error {
	for r.w-r.r < 2 {
		if err := r.fill(); err != nil {
			return unexpectedEOF(err)
		}
	}
	if r.buf[r.r] != '\r' || r.buf[r.r+1] != '\n' {
		return protocolErrorf("bulk string not terminated by CRLF")
	}
	r.r += 2
	return nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseInt parses a RESP decimal integer strictly: an optional '-', then
// digits, nothing else, no overflow.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, protocolErrorf("empty integer")
	}
	neg := b[0] == '-'
	if neg || b[0] == '+' {
		b = b[1:]
		if len(b) == 0 {
			return 0, protocolErrorf("empty integer")
		}
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, protocolErrorf("bad integer (%d bytes)", len(b))
		}
		if n > (math.MaxUint64-9)/10 {
			return 0, protocolErrorf("integer overflow")
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, protocolErrorf("integer overflow")
		}
		return -int64(n), nil
	}
	if n > math.MaxInt64 {
		return 0, protocolErrorf("integer overflow")
	}
	return int64(n), nil
}

// isDecimal reports whether b is an optional sign and at least one digit.
func isDecimal(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseDouble(b []byte) (float64, error) {
	switch unsafeString(b) {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan", "-nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(unsafeString(b), 64)
	if err != nil {
		return 0, protocolErrorf("bad double (%d bytes)", len(b))
	}
	return f, nil
}
