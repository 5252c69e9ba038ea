package resp

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReader feeds arbitrary bytes to the parser. It must never panic,
// whatever it accepts must survive a round trip through the test encoder,
// and it must read the same values when the bytes come one at a time (so
// no aggregate is ever whole in the buffer, and none is read from a slab).
// The seed corpus (below and in testdata/fuzz/FuzzReader) runs with go test.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*-1\r\n",
		"*2\r\n$1\r\na\r\n:2\r\n", "%1\r\n+a\r\n_\r\n", "~1\r\n#t\r\n", ">1\r\n,1.5\r\n",
		"!3\r\nabc\r\n", "=7\r\ntxt:abc\r\n", "(123\r\n", "|1\r\n+a\r\n+b\r\n:1\r\n",
		"*1\r\n*1\r\n*1\r\n*1\r\n_\r\n", "$2147483647\r\n", "*2147483647\r\n",
		",nan\r\n", ",-inf\r\n", "$0\r\n\r\n",
		"$70000\r\n", "*5000\r\n:1\r\n", "*2\r\n$70000\r\n", "+a\rb\r\n", "(12\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxBulkLen: 1 << 16, MaxAggregateLen: 1 << 12, MaxDepth: 16}
		r := NewReader(bytes.NewReader(data), 64, lim)
		slow := NewReader(iotest.OneByteReader(bytes.NewReader(data)), 64, lim)
		// The whole reader is told of runs of replies to share an
		// allocation, as the pipe does; the values must not change, nor
		// any earlier one be written over.
		var kept []Value
		var keptAs []string
		defer func() {
			for i, v := range kept {
				if v.String() != keptAs[i] {
					t.Fatalf("value %d changed from %s to %s", i, keptAs[i], v)
				}
			}
		}()
		for i := range 64 {
			var v, s Value
			r.ShareNext(i % 5)
			err := r.ReadValue(&v)
			serr := slow.ReadValue(&s)
			if (err == nil) != (serr == nil) || err == nil && v.String() != s.String() {
				t.Fatalf("whole: %s %v; byte by byte: %s %v", v, err, s, serr)
			}
			if err != nil {
				var le *LimitError
				if !errors.Is(err, ErrProtocol) && !errors.As(err, &le) &&
					!errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("unexpected error class: %v", err)
				}
				return
			}
			kept, keptAs = append(kept, v), append(keptAs, v.String())
			if v.Type() == Oversize {
				if v.Oversize(lim) == nil {
					t.Fatal("oversize value without its limit")
				}
				continue // skipped, nothing to round-trip
			}
			// Re-encode and re-parse: the value must be stable.
			enc := encodeForTest(nil, v)
			r2 := NewReader(bytes.NewReader(enc), 64, lim)
			var w Value
			if err := r2.ReadValue(&w); err != nil {
				t.Fatalf("re-parse of %q: %v", enc, err)
			}
			if v.String() != w.String() {
				t.Fatalf("round trip changed %s into %s", v, w)
			}
		}
	})
}
