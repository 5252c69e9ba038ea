package zipline

// The bitmap commands, on string values. Each is defined once; go generate
// makes its Client and Batch methods (commands_gen.go). They work on the
// stored bytes, so they are refused while strings are compressed: keep
// bitmaps on a Client without compression, or use Client.Raw.

// SetBit sets the bit at offset to value (0 or 1), and returns its old
// value.
//
//zipline:twins SetBit
func setBitCmd(key string, offset int64, value int) command[int64] {
	return define(decInt, specSETBIT, keyArg(key), num(offset), num(int64(value)))
}

// GetBit returns the bit at offset (0 past the end).
//
//zipline:twins GetBit
func getBitCmd(key string, offset int64) command[int64] {
	return define(decInt, specGETBIT, keyArg(key), num(offset))
}

// BitRange is a range of a bitmap for BitCount and BitPos: bytes (or,
// with Bit, bits) Start to End inclusive, negative counting from the end.
// The zero BitRange is the whole value.
type BitRange struct {
	Start, End int64
	Bit        bool
	Set        bool // the range is given; false means the whole value
}

func (r BitRange) appendTo(args []arg, withEnd bool) []arg {
	if !r.Set {
		return args
	}
	args = append(args, num(r.Start))
	if withEnd {
		args = append(args, num(r.End))
		if r.Bit {
			args = append(args, str("BIT"))
		}
	}
	return args
}

// Bytes returns the BitRange of bytes start to end; Bits, of bits.
func Bytes(start, end int64) BitRange { return BitRange{Start: start, End: end, Set: true} }
func Bits(start, end int64) BitRange  { return BitRange{Start: start, End: end, Bit: true, Set: true} }

// BitCount counts the bits set in a range of the value (the zero BitRange:
// all of it).
//
//zipline:twins BitCount buf=5
func bitCountCmd(buf []arg, key string, r BitRange) command[int64] {
	return define(decInt, specBITCOUNT, r.appendTo(append(buf, keyArg(key)), true)...)
}

// BitPos returns the position of the first bit set to bit (0 or 1) in a
// range of the value, or -1.
//
//zipline:twins BitPos buf=6
func bitPosCmd(buf []arg, key string, bit int, r BitRange) command[int64] {
	return define(decInt, specBITPOS, r.appendTo(append(buf, keyArg(key), num(int64(bit))), true)...)
}

// BitOp stores in dst the bitwise op ("AND", "OR", "XOR", "NOT") of the
// values of keys, and returns dst's length.
//
//zipline:twins BitOp
func bitOpCmd(op, dst string, keys ...string) command[int64] {
	args := make([]arg, 0, 2+len(keys))
	args = append(args, str(op), keyArg(dst))
	return define(decInt, specBITOP, append(args, keyArgs(keys)...)...)
}

// BitField runs BITFIELD's operations, given in the server's syntax ("GET",
// "u8", "0", "INCRBY", "i5", "100", "1", "OVERFLOW", "SAT", ...), and
// returns each GET, SET or INCRBY result (0 where OVERFLOW FAIL refused
// one).
//
//zipline:twins BitField
func bitFieldCmd(key string, ops ...string) command[[]int64] {
	return define(decIntsOrZero, specBITFIELD, keyAnd(key, ops)...)
}

// BitFieldRO is BitField with GET operations only, for replicas
// (BITFIELD_RO).
//
//zipline:twins BitFieldRO
func bitFieldROCmd(key string, ops ...string) command[[]int64] {
	return define(decIntsOrZero, specBITFIELD_RO, keyAnd(key, ops)...)
}
