package zipline

import (
	"strconv"
	"time"
)

// ListEnd names an end of a list, for LMove, BLMove, LMPop and BLMPop.
type ListEnd string

const (
	Left  ListEnd = "LEFT"
	Right ListEnd = "RIGHT"
)

// keyThenValues is a key followed by values.
func keyThenValues(key string, vals [][]byte) []arg {
	args := make([]arg, 0, 1+len(vals))
	args = append(args, keyArg(key))
	for _, v := range vals {
		args = append(args, bin(v))
	}
	return args
}

// keysThenTimeout builds a blocking pop's arguments: the keys, then the
// timeout in seconds as Redis takes it (fractions allowed since 6.0). Zero
// waits forever, bounded only by ctx.
func keysThenTimeout(keys []string, timeout time.Duration) []arg {
	args := make([]arg, 0, len(keys)+1)
	args = append(args, keyArgs(keys)...)
	return append(args, flt(timeout.Seconds()))
}

// The list commands. Each is defined once; go generate makes its Client
// and Batch methods (commands_gen.go). Blocking ones run on a dedicated
// connection, never stalling others; queued in a Batch, they make the
// batch run on one.

// LPush inserts values at the head of the list and returns its length.
//
//zipline:twins LPush
func lpushCmd(key string, vals ...[]byte) command[int64] {
	return define(decInt, specLPUSH, keyThenValues(key, vals)...)
}

// RPush appends values to the tail of the list and returns its length.
//
//zipline:twins RPush
func rpushCmd(key string, vals ...[]byte) command[int64] {
	return define(decInt, specRPUSH, keyThenValues(key, vals)...)
}

// LPushX is LPush only if the list exists; it returns its length (0 if
// not).
//
//zipline:twins LPushX
func lpushXCmd(key string, vals ...[]byte) command[int64] {
	return define(decInt, specLPUSHX, keyThenValues(key, vals)...)
}

// RPushX is RPush only if the list exists; it returns its length (0 if
// not).
//
//zipline:twins RPushX
func rpushXCmd(key string, vals ...[]byte) command[int64] {
	return define(decInt, specRPUSHX, keyThenValues(key, vals)...)
}

// LPop removes and returns the first element, or Nil if the list is empty.
//
//zipline:twins LPop
func lpopCmd(key string) command[[]byte] { return define(decBytes, specLPOP, keyArg(key)) }

// RPop removes and returns the last element, or Nil if the list is empty.
//
//zipline:twins RPop
func rpopCmd(key string) command[[]byte] { return define(decBytes, specRPOP, keyArg(key)) }

// LPopCount removes and returns up to count elements from the head, or Nil
// if the list is empty.
//
//zipline:twins LPopCount
func lpopCountCmd(key string, count int64) command[[][]byte] {
	return define(decBytesSlice, specLPOP, keyArg(key), num(count))
}

// RPopCount removes and returns up to count elements from the tail, or Nil
// if the list is empty.
//
//zipline:twins RPopCount
func rpopCountCmd(key string, count int64) command[[][]byte] {
	return define(decBytesSlice, specRPOP, keyArg(key), num(count))
}

// LRange returns the elements from start to stop inclusive; negative
// indexes count from the end.
//
//zipline:twins LRange
func lrangeCmd(key string, start, stop int64) command[[][]byte] {
	return define(decBytesSlice, specLRANGE, keyArg(key), num(start), num(stop))
}

// LLen returns the length of the list.
//
//zipline:twins LLen
func llenCmd(key string) command[int64] { return define(decInt, specLLEN, keyArg(key)) }

// LIndex returns the element at index, or Nil if out of range.
//
//zipline:twins LIndex
func lindexCmd(key string, index int64) command[[]byte] {
	return define(decBytes, specLINDEX, keyArg(key), num(index))
}

// LSet replaces the element at index.
//
//zipline:twins LSet client=error
func lsetCmd(key string, index int64, val []byte) command[bool] {
	return define(decOK, specLSET, keyArg(key), num(index), bin(val))
}

// LRem removes count occurrences of val (all if 0, from the tail if
// negative) and returns how many were removed.
//
//zipline:twins LRem
func lremCmd(key string, count int64, val []byte) command[int64] {
	return define(decInt, specLREM, keyArg(key), num(count), bin(val))
}

// LTrim keeps only the elements from start to stop inclusive.
//
//zipline:twins LTrim client=error
func ltrimCmd(key string, start, stop int64) command[bool] {
	return define(decOK, specLTRIM, keyArg(key), num(start), num(stop))
}

// LInsert inserts val before (or after) the first element equal to pivot
// and returns the new length, or -1 if pivot is not found.
//
//zipline:twins LInsert
func linsertCmd(key string, before bool, pivot, val []byte) command[int64] {
	where := "AFTER"
	if before {
		where = "BEFORE"
	}
	return define(decInt, specLINSERT, keyArg(key), str(where), bin(pivot), bin(val))
}

// LPosArgs are LPOS's options. The zero LPosArgs finds the first match
// from the head, looking at every element.
type LPosArgs struct {
	Rank   int64 // the Rank-th match (negative: from the tail); 0 is 1
	MaxLen int64 // compare at most MaxLen elements; 0: all
}

func (a LPosArgs) appendTo(args []arg) []arg {
	if a.Rank != 0 {
		args = append(args, str("RANK"), num(a.Rank))
	}
	if a.MaxLen != 0 {
		args = append(args, str("MAXLEN"), num(a.MaxLen))
	}
	return args
}

// LPos returns the index of the first element equal to val, or Nil if
// none is. It is refused while lists are compressed: it compares stored
// bytes.
//
//zipline:twins LPos buf=6
func lposCmd(buf []arg, key string, val []byte, a LPosArgs) command[int64] {
	return define(decIntOrNil, specLPOS, a.appendTo(append(buf, keyArg(key), bin(val)))...)
}

// LPosCount returns the indexes of up to count elements equal to val (0:
// all).
//
//zipline:twins LPosCount buf=8
func lposCountCmd(buf []arg, key string, val []byte, count int64, a LPosArgs) command[[]int64] {
	return define(decInts, specLPOS, a.appendTo(append(buf, keyArg(key), bin(val), str("COUNT"), num(count)))...)
}

// LMove atomically pops an element from one end of src and pushes it to an
// end of dst, returning it (Nil if src is empty).
//
//zipline:twins LMove
func lmoveCmd(src, dst string, from, to ListEnd) command[[]byte] {
	return define(decBytes, specLMOVE, keyArg(src), keyArg(dst), str(string(from)), str(string(to)))
}

// RPopLPush is LMove from the tail of src to the head of dst.
//
//zipline:twins RPopLPush
func rpopLPushCmd(src, dst string) command[[]byte] {
	return define(decBytes, specRPOPLPUSH, keyArg(src), keyArg(dst))
}

// mpopArgs are the arguments of LMPOP and ZMPOP (and their blocking
// forms, after their timeout): numkeys, the keys, the end, and COUNT when
// more than one.
func mpopArgs(timeout *time.Duration, from string, count int64, keys []string) ([]arg, error) {
	if count < 1 {
		return nil, &ArgumentError{Command: "MPOP", Reason: "count " + strconv.FormatInt(count, 10) +
			" pops nothing: want 1 or more (the server refuses COUNT 0)"}
	}
	args := make([]arg, 0, len(keys)+5)
	if timeout != nil {
		args = append(args, flt(timeout.Seconds()))
	}
	args = append(args, num(int64(len(keys))))
	args = append(args, keyArgs(keys)...)
	args = append(args, str(from))
	if count > 1 {
		args = append(args, str("COUNT"), num(count))
	}
	return args, nil
}

// LMPop pops up to count elements (at least one) from the given end of the
// first non-empty list among keys, or returns Nil if all are empty.
//
//zipline:twins LMPop
func lmpopCmd(from ListEnd, count int64, keys ...string) (command[KeyValues], error) {
	args, err := mpopArgs(nil, string(from), count, keys)
	return define(decKeyValues, specLMPOP, args...), named(err, "LMPOP")
}

// BLPop pops the first element of the first non-empty list among keys,
// waiting up to timeout (0: until ctx ends) for one. It returns Nil on
// timeout.
//
//zipline:twins BLPop
func blpopCmd(timeout time.Duration, keys ...string) command[KeyValue] {
	return defineBlocking(decKeyValue, timeout, specBLPOP, keysThenTimeout(keys, timeout)...)
}

// BRPop is BLPop from the tail.
//
//zipline:twins BRPop
func brpopCmd(timeout time.Duration, keys ...string) command[KeyValue] {
	return defineBlocking(decKeyValue, timeout, specBRPOP, keysThenTimeout(keys, timeout)...)
}

// BLMove is LMove that waits up to timeout for src to have an element.
//
//zipline:twins BLMove
func blmoveCmd(src, dst string, from, to ListEnd, timeout time.Duration) command[[]byte] {
	return defineBlocking(decBytes, timeout, specBLMOVE, keyArg(src), keyArg(dst), str(string(from)), str(string(to)),
		flt(timeout.Seconds()))
}

// BRPopLPush is RPopLPush that waits up to timeout for src to have an
// element.
//
//zipline:twins BRPopLPush
func brpopLPushCmd(src, dst string, timeout time.Duration) command[[]byte] {
	return defineBlocking(decBytes, timeout, specBRPOPLPUSH, keyArg(src), keyArg(dst), flt(timeout.Seconds()))
}

// BLMPop is LMPop that waits up to timeout for one of the lists to have
// an element.
//
//zipline:twins BLMPop
func blmpopCmd(timeout time.Duration, from ListEnd, count int64, keys ...string) (command[KeyValues], error) {
	args, err := mpopArgs(&timeout, string(from), count, keys)
	return defineBlocking(decKeyValues, timeout, specBLMPOP, args...), named(err, "BLMPOP")
}
