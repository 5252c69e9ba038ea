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
	// DefaultBufferSize is the initial read buffer of a Reader.
	DefaultBufferSize = 16 << 10
	// maxLineLen bounds a simple string, error or number line.
	maxLineLen = 64 << 10
	// exactAllocMax is the largest bulk string allocated in one piece from its
	// declared length alone; beyond it, memory grows only as bytes arrive, so a
	// lying length prefix cannot make us allocate memory the peer never fills.
	exactAllocMax = 1 << 20
	// maxAggregatePrealloc plays the same role for element slices.
	maxAggregatePrealloc = 1024
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

// LimitError reports a reply that exceeds one of the Reader's Limits. Like a
// protocol error, it leaves the stream out of step.
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
}

// NewReader returns a Reader with a buffer of size bytes (DefaultBufferSize if
// size <= 0) enforcing lim.
func NewReader(rd io.Reader, size int, lim Limits) *Reader {
	if size <= 0 {
		size = DefaultBufferSize
	}
	return &Reader{rd: rd, buf: make([]byte, size), limits: lim.withDefaults()}
}

// Reset makes the Reader read from rd, dropping any buffered bytes.
func (r *Reader) Reset(rd io.Reader) {
	r.rd = rd
	r.r, r.w = 0, 0
}

// Buffered reports how many bytes are waiting in the buffer. The pipe uses
// it to tell a burst of replies, all already read, from a single one.
func (r *Reader) Buffered() int { return r.w - r.r }

// ReadValue parses the next complete reply into v. Attributes (RESP3 "|")
// are read and dropped. Any error other than a server error reply (which is
// a Value, not an error) means the stream can no longer be trusted.
func (r *Reader) ReadValue(v *Value) error {
	return r.readValue(v, 0)
}

func (r *Reader) readValue(v *Value, depth int) error {
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
		case SimpleString:
			*v = Value{typ: typ, str: r.simpleString(body)}
			return nil
		case SimpleError, BigNumber:
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
				return protocolErrorf("null with payload %q", body)
			}
			*v = Value{typ: Null}
			return nil
		case Boolean:
			if len(body) != 1 || (body[0] != 't' && body[0] != 'f') {
				return protocolErrorf("bad boolean %q", body)
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
			return protocolErrorf("unknown reply type %q", line[0])
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
		return &LimitError{What: "bulk length", Size: n, Limit: r.limits.MaxBulkLen}
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
		if n > math.MaxInt64/2 {
			return &LimitError{What: "aggregate length", Size: n, Limit: r.limits.MaxAggregateLen}
		}
		n *= 2
	}
	if n > r.limits.MaxAggregateLen {
		return &LimitError{What: "aggregate length", Size: n, Limit: r.limits.MaxAggregateLen}
	}
	if depth+1 > r.limits.MaxDepth {
		return &LimitError{What: "nesting depth", Size: int64(depth + 1), Limit: int64(r.limits.MaxDepth)}
	}
	elems := make([]Value, 0, min(n, maxAggregatePrealloc))
	for i := int64(0); i < n; i++ {
		elems = append(elems, Value{})
		if err := r.readValue(&elems[len(elems)-1], depth+1); err != nil {
			return err
		}
	}
	*v = Value{typ: typ, elems: elems}
	return nil
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
// the buffer if it is full (up to what a maximal line needs).
func (r *Reader) fill() error {
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	if r.w == len(r.buf) {
		r.buf = append(r.buf, make([]byte, len(r.buf))...)[:2*len(r.buf)]
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// readN returns the next n bytes in a new slice.
func (r *Reader) readN(n int) ([]byte, error) {
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
			return 0, protocolErrorf("bad integer %q", b)
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
		return 0, protocolErrorf("bad double %q", b)
	}
	return f, nil
}
