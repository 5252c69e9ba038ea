package codec

import (
	"strings"
	"testing"
)

func TestIsNumber(t *testing.T) {
	numbers := []string{
		"0", "-1", "+7", "1111111111111111111", "-9223372036854775808", "99999999999999999999999",
		"1.", ".5", "-0.25", "1e10", "1E-3", "2.5e+07", "1." + strings.Repeat("0", 70),
		"0x1p3", "0X1.8P-2", "0xff", "inf", "-Infinity", "+INF",
		strings.Repeat("9", 5*1024-1),
	}
	others := []string{
		"", " 1", "1 ", "1a", "abc", ".", "-", "+", "e5", "1e", "1e+", "1.2.3", "0x", "0xp3", "nan", "infinit",
		"--1", "1_000", `{"n":1}`, "12:30", strings.Repeat("9", 5*1024),
	}
	for _, s := range numbers {
		if !isNumber([]byte(s)) {
			t.Errorf("isNumber(%.40q) = false, want true", s)
		}
	}
	for _, s := range others {
		if isNumber([]byte(s)) {
			t.Errorf("isNumber(%.40q) = true, want false", s)
		}
	}
}

// A value the server reads as a number is stored as is, however long and
// compressible, so that INCR and INCRBYFLOAT keep working on it.
func TestEncodeLeavesNumbersAsTheyAre(t *testing.T) {
	for _, b := range []Backend{Zstd, LZ4} {
		c, err := New(b, WithMinSize(6))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"1111111111111111111", "1." + strings.Repeat("0", 70), "-" + strings.Repeat("1", 400)} {
			out, compressed := c.Encode(nil, []byte(s))
			if compressed || string(out) != s {
				t.Errorf("%v: Encode(%.30q...) compressed it (%d bytes)", b, s, len(out))
			}
		}
		if _, compressed := c.Encode(nil, []byte(strings.Repeat("a1", 100))); !compressed {
			t.Errorf("%v: a compressible non-number was not compressed", b)
		}
	}
}
