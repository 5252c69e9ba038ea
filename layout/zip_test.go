package layout

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
)

func zipTail(s string) string { return string(appendZipTail(nil, s)) }

func TestZipTail(t *testing.T) {
	for tail, want := range map[string]string{
		"12345":                "3d7",
		"0":                    "0",
		"7":                    "7",
		"007":                  "0007",
		"123:profile":          "1Z:0profile",
		"123:posts:4567":       "1Z:0posts:1bF",
		"a-b":                  "a-b",
		"":                     "",
		"x::y":                 "0x::0y",
		"#5":                   "0#5",
		"18446744073709551615": "lYGhA16ahyf",
		"18446744073709551616": "018446744073709551616", // beyond uint64: kept literal
		"-5":                   "-5",
		"+5":                   "+5",
	} {
		if got := zipTail(tail); got != want {
			t.Errorf("zip(%q) = %q, want %q", tail, got, want)
		}
		back, err := unzipTail(want)
		if err != nil || back != tail {
			t.Errorf("unzip(%q) = %q, %v; want %q", want, back, err, tail)
		}
	}
}

// Zipping is lossless: every tail survives the round trip, and different
// tails never zip to the same name.
func TestZipTailIsInjectiveAndReversible(t *testing.T) {
	seen := map[string]string{}
	check := func(tail string) bool {
		z := zipTail(tail)
		back, err := unzipTail(z)
		if err != nil || back != tail {
			t.Errorf("round trip %q -> %q -> %q, %v", tail, z, back, err)
			return false
		}
		if prev, ok := seen[z]; ok && prev != tail {
			t.Errorf("collision: %q and %q both zip to %q", prev, tail, z)
			return false
		}
		seen[z] = tail
		return true
	}
	for i := range 5000 {
		check(strconv.Itoa(i))
		check("0" + strconv.Itoa(i))
		check("00" + strconv.Itoa(i))
	}
	alphabet := "0123456789abcXYZ:#-_"
	r := rand.New(rand.NewPCG(1, 2))
	for range 50_000 {
		var b strings.Builder
		for range r.IntN(10) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		check(b.String())
	}
	if err := quick.Check(func(s string) bool { return check(s) }, nil); err != nil {
		t.Fatal(err)
	}
	if math.MaxUint64 != 18446744073709551615 {
		t.Fatal("unreachable")
	}
}

func TestBase62(t *testing.T) {
	for _, n := range []uint64{0, 1, 61, 62, 123, 1 << 40, math.MaxUint64} {
		s := string(appendBase62(nil, n))
		if got, ok := parseBase62(s); !ok || got != n {
			t.Errorf("%d -> %q -> %d %v", n, s, got, ok)
		}
	}
	for _, bad := range []string{"", "00", "01", "a-", "zzzzzzzzzzzzz"} {
		if _, ok := parseBase62(bad); ok {
			t.Errorf("parseBase62(%q) accepted", bad)
		}
	}
}
