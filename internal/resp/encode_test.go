package resp

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAppendCommand(t *testing.T) {
	b := AppendArrayLen(nil, 3)
	b = AppendBulkString(b, "SET")
	b = AppendBulk(b, []byte("k"))
	b = AppendBulkInt(b, -42)
	if got, want := string(b), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n-42\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestAppendLengthLine checks the header lines written without strconv
// against those written with it, across each boundary of the short path.
func TestAppendLengthLine(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 65536, 1 << 40} {
		want := "*" + strconv.Itoa(n) + "\r\n"
		if got := string(AppendArrayLen([]byte("x"), n)); got != "x"+want {
			t.Errorf("AppendArrayLen(%d) = %q, want %q", n, got, "x"+want)
		}
		if got := string(appendBulkHeader(nil, n)); got != "$"+strconv.Itoa(n)+"\r\n" {
			t.Errorf("appendBulkHeader(%d) = %q", n, got)
		}
	}
}

func TestAppendAny(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	epochBinary, _ := epoch.MarshalBinary()
	cases := []struct {
		v    any
		want string
	}{
		{"abc", "abc"},
		{[]byte("x y"), "x y"},
		{int(-1), "-1"},
		{int8(-8), "-8"},
		{int16(16), "16"},
		{int32(32), "32"},
		{int64(math.MinInt64), "-9223372036854775808"},
		{uint(1), "1"},
		{uint8(255), "255"},
		{uint16(65535), "65535"},
		{uint32(1 << 31), "2147483648"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{1.5, "1.5"},
		{float32(0.25), "0.25"},
		{math.Inf(1), "+inf"},
		{math.Inf(-1), "-inf"},
		{1e21, "1e+21"},
		{true, "1"},
		{false, "0"},
		{epoch, string(epochBinary)}, // encoding.BinaryMarshaler
	}
	for _, c := range cases {
		b, err := AppendAny(nil, 0, c.v)
		if err != nil {
			t.Errorf("%T %v: %v", c.v, c.v, err)
			continue
		}
		v, err := readOne(t, string(b))
		if err != nil || string(v.Bytes()) != c.want {
			t.Errorf("%T %v: encoded %q, want bulk %q (%v)", c.v, c.v, b, c.want, err)
		}
	}
	for i, bad := range []any{nil, struct{}{}, []string{"a"}, map[string]int{}} {
		_, err := AppendAny(nil, i, bad)
		var ae *ArgTypeError
		if !errors.As(err, &ae) || ae.Index != i || !strings.Contains(err.Error(), "unsupported type") {
			t.Errorf("%T: got %v, want ArgTypeError", bad, err)
		}
	}
}

func TestEncodeAllocations(t *testing.T) {
	buf := make([]byte, 0, 256)
	key, val := "user:12345", make([]byte, 64)
	n := testing.AllocsPerRun(1000, func() {
		b := AppendArrayLen(buf[:0], 5)
		b = AppendBulkString(b, "SET")
		b = AppendBulkString(b, key)
		b = AppendBulk(b, val)
		b = AppendBulkInt(b, 600)
		b = AppendBulkFloat(b, 1.25)
		_ = b
	})
	if n != 0 {
		t.Fatalf("encoding a command allocated %v times, want 0", n)
	}
}

func BenchmarkAppendSet(b *testing.B) {
	buf := make([]byte, 0, 256)
	val := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		c := AppendArrayLen(buf[:0], 3)
		c = AppendBulkString(c, "SET")
		c = AppendBulkString(c, "user:12345")
		c = AppendBulk(c, val)
		buf = c
	}
}
