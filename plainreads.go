package zipline

import (
	"math/bits"
	"strconv"
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Reads of a value's bytes, answered on the plaintext. STRLEN, GETRANGE,
// GETBIT, BITCOUNT, BITPOS and HSTRLEN of a key whose value may be stored
// compressed would measure or cut the stored envelope; instead the client
// reads the value (GET, HGET), expands it, and computes what the server
// would have answered on the plaintext, errors included (a key of another
// type refuses GET as it refuses the command). A command whose arguments
// the server would refuse is sent as it is: the server refuses it before
// reading anything, so its error is the answer either way. LCS is not
// among them: the one read of two values (MGET) answers nil both for a
// missing key and for one of another type, where LCS reads the first as
// empty and refuses the second, so it is refused instead.

// plainRead is one such command: what is sent instead, and how its reply
// becomes the command's.
type plainRead struct {
	kind plainReadKind
	// sent is the read the command is answered from.
	spec   *commandSpec
	args   []arg
	expect resp.TypeSet
	// The command's own arguments.
	start, end int64 // a range (GETRANGE, BITCOUNT, BITPOS)
	ranged     bool  // BITCOUNT, BITPOS: a start was given
	endGiven   bool  // BITPOS: an end was given
	bitUnit    bool  // BITCOUNT, BITPOS: the range counts bits, not bytes
	bit        int64 // GETBIT's offset; BITPOS's bit
}

type plainReadKind uint8

const (
	readNone plainReadKind = iota
	readStrlen
	readGetRange
	readGetBit
	readBitCount
	readBitPos
	readHStrlen
)

// newPlainRead parses a command of kind with args and returns what to send
// instead; nil when the arguments are ones the server refuses before
// reading the value, so that the command is sent as it is.
func newPlainRead(kind plainReadKind, args []arg) *plainRead {
	r := &plainRead{kind: kind, spec: specGET, expect: tsBulk}
	intArg := func(i int) (int64, bool) {
		if i >= len(args) {
			return 0, false
		}
		n, err := strconv.ParseInt(args[i].text(), 10, 64)
		return n, err == nil
	}
	var ok bool
	switch kind {
	case readStrlen:
		ok = len(args) == 1
	case readGetRange:
		r.start, ok = intArg(1)
		if ok {
			r.end, ok = intArg(2)
		}
		ok = ok && len(args) == 3
	case readGetBit:
		r.bit, ok = intArg(1)
		ok = ok && len(args) == 2 && r.bit >= 0 && r.bit>>3 < 512<<20
	case readBitCount:
		switch len(args) {
		case 1:
			ok = true
		case 3, 4:
			r.ranged = true
			r.start, ok = intArg(1)
			if ok {
				r.end, ok = intArg(2)
			}
			if ok && len(args) == 4 {
				ok, r.bitUnit = unitArg(&args[3])
			}
		}
	case readBitPos:
		r.bit, ok = intArg(1)
		ok = ok && (r.bit == 0 || r.bit == 1) && len(args) <= 5
		if ok && len(args) >= 3 {
			r.ranged = true
			r.start, ok = intArg(2)
		}
		if ok && len(args) >= 4 {
			r.endGiven = true
			r.end, ok = intArg(3)
		}
		if ok && len(args) == 5 {
			ok, r.bitUnit = unitArg(&args[4])
		}
	case readHStrlen:
		r.spec = specHGET
		ok = len(args) == 2
	}
	if !ok {
		return nil
	}
	n := 1
	if kind == readHStrlen {
		n = 2
	}
	r.args = append([]arg(nil), args[:n]...) // a copy: args may live on the caller's stack
	return r
}

// unitArg reads BITCOUNT's and BITPOS's BYTE or BIT.
func unitArg(a *arg) (ok, bit bool) {
	switch {
	case a.isWord("BYTE"):
		return true, false
	case a.isWord("BIT"):
		return true, true
	}
	return false, false
}

// answer computes the command's reply from the read's reply v, the values
// in it expanded with vc.
func (r *plainRead) answer(vc *valueCodec, v resp.Value) (resp.Value, error) {
	plain := func(v resp.Value) ([]byte, error) {
		if v.Type() != resp.BulkString {
			return nil, nil // missing: the server reads an empty string
		}
		return vc.decodeValue(v.Bytes())
	}
	p, err := plain(v)
	if err != nil {
		return resp.Value{}, err
	}
	switch r.kind {
	case readStrlen, readHStrlen:
		return resp.IntValue(int64(len(p))), nil
	case readGetRange:
		lo, hi := clampRange(r.start, r.end, int64(len(p)), true)
		if lo > hi {
			return resp.StringValue([]byte{}), nil
		}
		return resp.StringValue(p[lo : hi+1]), nil
	case readGetBit:
		return resp.IntValue(int64(bitAt(p, r.bit))), nil
	case readBitCount:
		lo, hi := r.bitSpan(int64(len(p)))
		n := 0
		for i := lo; i <= hi; {
			if i%8 == 0 && i+7 <= hi {
				n += bits.OnesCount8(p[i/8])
				i += 8
				continue
			}
			n += bitAt(p, i)
			i++
		}
		return resp.IntValue(int64(n)), nil
	case readBitPos:
		if v.Type() != resp.BulkString { // missing: all zeros, however long
			return resp.IntValue(map[bool]int64{true: -1, false: 0}[r.bit == 1]), nil
		}
		lo, hi := r.bitSpan(int64(len(p)))
		if lo > hi {
			return resp.IntValue(-1), nil
		}
		for i := lo; i <= hi; i++ {
			if int64(bitAt(p, i)) == r.bit {
				return resp.IntValue(i), nil
			}
		}
		if r.bit == 0 && !r.endGiven {
			// Past the end, the string reads as zeros.
			return resp.IntValue(hi + 1), nil
		}
		return resp.IntValue(-1), nil
	}
	return v, nil
}

// bitSpan returns the bits, first and last inclusive, that a BITCOUNT or
// BITPOS range covers in a value of n bytes (lo > hi: none).
func (r *plainRead) bitSpan(n int64) (lo, hi int64) {
	if !r.ranged {
		return 0, 8*n - 1
	}
	end := r.end
	if !r.endGiven && r.kind == readBitPos {
		end = -1
	}
	// BITCOUNT, as GETRANGE, takes two negative bounds in the wrong order
	// for an empty range before resolving them; BITPOS does not.
	bothNegativeEmpty := r.kind == readBitCount
	if r.bitUnit {
		return clampRange(r.start, end, 8*n, bothNegativeEmpty)
	}
	lo, hi = clampRange(r.start, end, n, bothNegativeEmpty)
	if lo > hi {
		return 1, 0
	}
	return 8 * lo, 8*hi + 7
}

// clampRange resolves a start and end (inclusive; negative counts from the
// end) over a length n as the server does, lo > hi meaning empty. With
// bothNegativeEmpty, two negative bounds in the wrong order are empty at
// once (GETRANGE's rule).
func clampRange(start, end, n int64, bothNegativeEmpty bool) (lo, hi int64) {
	if bothNegativeEmpty && start < 0 && end < 0 && start > end {
		return 1, 0
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if n == 0 {
		return 1, 0
	}
	return start, end
}

// bitAt is the bit at offset i of p, most significant first; 0 past its end.
func bitAt(p []byte, i int64) int {
	if i < 0 || i/8 >= int64(len(p)) {
		return 0
	}
	return int(p[i/8]>>(7-uint(i%8))) & 1
}

// scopeHint suggests the rule that keeps key out of the compressed scope:
// its first segment (up to and including a ':'), then *.
func scopeHint(key string) string {
	prefix := key
	if i := strings.IndexByte(key, ':'); i >= 0 {
		prefix = key[:i+1]
	}
	var b strings.Builder
	for i := 0; i < len(prefix); i++ {
		if strings.IndexByte(`*?[]\`, prefix[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(prefix[i])
	}
	return strconv.Quote(b.String() + "*")
}
