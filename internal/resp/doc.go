// Package resp encodes Redis commands and parses RESP2 and RESP3 replies.
//
// It does no network I/O of its own and starts no goroutines: the encoder
// appends to a caller's byte slice, and the [Reader] parses from any
// io.Reader. Both are written for the pipelined connection in internal/pipe,
// where one reader goroutine parses every reply for hundreds of callers, so
// the hot path avoids allocation:
//
//   - Arguments are appended with typed functions ([AppendBulkString],
//     [AppendBulkInt], ...), never boxed in an interface. [AppendAny] exists
//     for the untyped Do path.
//   - Replies are [Value] structs, not interface{} trees. A bulk string costs
//     one allocation (its bytes, which the caller then owns); +OK and other
//     common simple strings cost none.
//
// The parser is bounded by [Limits]: a hostile or corrupt stream can make it
// fail with a [*LimitError] or [ErrProtocol], never allocate more than the
// bytes that actually arrived justify, recurse without bound, or panic.
// Its fuzz target (FuzzReader) runs its seed corpus with every go test.
package resp
