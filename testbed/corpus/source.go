package corpus

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
	"time"
)

// source is the random stream behind one Generator, with helpers that
// append realistic values: ids, tokens, timestamps, names and prose.
//
// Everything is integer arithmetic on a PCG stream. There is no floating
// point on purpose: Go may fuse a multiply and an add on some
// architectures, and a one-ulp difference in a size or a price would make
// the output depend on the platform.
type source struct {
	r   *rand.Rand
	now int64  // "current" time of the document being built, in Unix seconds
	tmp []byte // scratch for values built before they are written
	raw []byte // scratch for random bytes; never aliases tmp
}

// epoch is the earliest "now" a document can have: 2024-01-01T00:00:00Z.
// Documents spread over the two years after it.
const epoch = 1704067200

func (s *source) intn(n int) int { return s.r.IntN(n) }

// between returns a uniform integer in [lo, hi].
func (s *source) between(lo, hi int) int { return lo + s.r.IntN(hi-lo+1) }

// chance reports true with probability pct/100.
func (s *source) chance(pct int) bool { return s.r.IntN(100) < pct }

func (s *source) pick(list []string) string { return list[s.r.IntN(len(list))] }

// newNow starts a document: it picks the document's "now".
func (s *source) newNow() { s.now = epoch + int64(s.r.IntN(2*365*24*3600)) }

// ago returns a Unix time up to maxSec seconds before the document's now.
func (s *source) ago(maxSec int) int64 { return s.now - int64(s.r.IntN(maxSec+1)) }

// appendISO appends an RFC 3339 UTC timestamp, with milliseconds if ms is
// set (as JavaScript's toISOString writes it).
func appendISO(dst []byte, unix int64, ms bool) []byte {
	t := time.Unix(unix, 0).UTC()
	if !ms {
		return t.AppendFormat(dst, time.RFC3339)
	}
	return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
}

// appendISOms is appendISO with a random millisecond part.
func (s *source) appendISOms(dst []byte, unix int64) []byte {
	t := time.Unix(unix, int64(s.r.IntN(1000))*int64(time.Millisecond)).UTC()
	return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
}

const hexDigits = "0123456789abcdef"

// appendHex appends n random bytes as lowercase hex (2n characters), like
// a hash, a commit id or a hex session token.
func (s *source) appendHex(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		b := byte(s.r.Uint32())
		dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
	}
	return dst
}

// appendRandBytes appends n random bytes.
func (s *source) appendRandBytes(dst []byte, n int) []byte {
	for n > 0 {
		v := s.r.Uint64()
		for i := 0; i < 8 && n > 0; i++ {
			dst = append(dst, byte(v))
			v >>= 8
			n--
		}
	}
	return dst
}

// appendToken appends n random bytes in unpadded URL-safe base64, the
// usual encoding of CSRF secrets, session ids and opaque OAuth tokens.
func (s *source) appendToken(dst []byte, n int) []byte {
	s.raw = s.appendRandBytes(s.raw[:0], n)
	return base64.RawURLEncoding.AppendEncode(dst, s.raw)
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// appendBase62 appends n random alphanumerics, like Stripe-style ids.
func (s *source) appendBase62(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, base62[s.r.IntN(62)])
	}
	return dst
}

// appendUUID appends a random (version 4) UUID.
func (s *source) appendUUID(dst []byte) []byte {
	var b [16]byte
	s.appendRandBytes(b[:0], 16) // fills b in place: b[:0] has room for 16

	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// appendCents appends an amount given in cents as "12.34".
func appendCents(dst []byte, cents int) []byte {
	dst = strconv.AppendInt(dst, int64(cents/100), 10)
	c := cents % 100
	return append(dst, '.', byte('0'+c/10), byte('0'+c%10))
}

// price returns a realistic retail price in cents: mostly under 100.00,
// ending in .99, .95 or .00.
func (s *source) price() int {
	units := s.between(3, 60)
	if s.chance(25) {
		units = s.between(60, 400)
	}
	switch s.intn(3) {
	case 0:
		return units*100 + 99
	case 1:
		return units*100 + 95
	}
	return units * 100
}

// appendIP appends an IPv4 address from the documentation and private
// ranges, with a public-looking first octet most of the time.
func (s *source) appendIP(dst []byte) []byte {
	first := [...]int{203, 198, 192, 172, 10, 81, 93, 151, 185, 24, 73, 98}
	dst = strconv.AppendInt(dst, int64(first[s.intn(len(first))]), 10)
	for i := 0; i < 3; i++ {
		dst = append(dst, '.')
		dst = strconv.AppendInt(dst, int64(s.between(1, 254)), 10)
	}
	return dst
}

// appendProse appends a sentence of minW..maxW words from proseWords,
// capitalized and ending with a period.
func (s *source) appendProse(dst []byte, minW, maxW int) []byte {
	n := s.between(minW, maxW)
	for i := 0; i < n; i++ {
		w := s.pick(proseWords)
		if i > 0 {
			dst = append(dst, ' ')
		}
		if i == 0 && w[0] >= 'a' && w[0] <= 'z' {
			dst = append(dst, w[0]-'a'+'A')
			w = w[1:]
		}
		dst = append(dst, w...)
		if i > 1 && i < n-2 && s.chance(8) {
			dst = append(dst, ',')
		}
	}
	return append(dst, '.')
}

// person is a name drawn from the word lists.
type person struct{ first, last string }

func (s *source) person() person { return person{s.pick(firstNames), s.pick(lastNames)} }

// appendLowerASCII appends s in lower case with accents folded and
// anything else that cannot appear in a login or an e-mail dropped.
func appendLowerASCII(dst []byte, s string) []byte {
	for _, r := range s {
		dst = appendLowerRune(dst, r)
	}
	return dst
}

// appendLowerRune is appendLowerASCII for one rune.
func appendLowerRune(dst []byte, r rune) []byte {
	switch {
	case r >= 'A' && r <= 'Z':
		return append(dst, byte(r-'A'+'a'))
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		return append(dst, byte(r))
	case r == 'é' || r == 'ë':
		return append(dst, 'e')
	case r == 'ü':
		return append(dst, 'u')
	case r == 'ã':
		return append(dst, 'a')
	}
	return dst
}

// appendUsername appends a login derived from the name, such as "mgarcia"
// or "emily.chen42".
func (s *source) appendUsername(dst []byte, p person) []byte {
	switch s.intn(3) {
	case 0:
		dst = appendLowerASCII(dst, p.first[:1])
		dst = appendLowerASCII(dst, p.last)
	case 1:
		dst = appendLowerASCII(dst, p.first)
		dst = append(dst, '.')
		dst = appendLowerASCII(dst, p.last)
	default:
		dst = appendLowerASCII(dst, p.first)
		dst = appendLowerASCII(dst, p.last[:1])
	}
	if s.chance(50) {
		dst = strconv.AppendInt(dst, int64(s.between(1, 99)), 10)
	}
	return dst
}

// appendEmail appends an e-mail address for the person.
func (s *source) appendEmail(dst []byte, p person) []byte {
	dst = s.appendUsername(dst, p)
	dst = append(dst, '@')
	return append(dst, s.pick(emailDomains)...)
}

// appendSlug appends a URL slug of title: lower case, words joined by '-'.
func appendSlug(dst []byte, title string) []byte {
	dash := false
	for _, r := range title {
		if r == ' ' || r == '/' || r == '&' || r == '-' {
			dash = len(dst) > 0
			continue
		}
		if dash {
			dst = append(dst, '-')
			dash = false
		}
		dst = appendLowerRune(dst, r)
	}
	return dst
}

// product is a catalogue entry drawn from the word lists.
type product struct {
	id     int
	sku    string
	noun   string // what it is, e.g. "Backpack"
	title  string // e.g. "Classic Backpack"
	cents  int
	vendor string
}

func (s *source) product() product {
	adj, noun := s.pick(productAdjectives), s.pick(productNouns)
	id := s.between(10000, 999999)
	sku := make([]byte, 0, 16)
	sku = appendLowerASCII(sku, adj[:2])
	sku = appendLowerASCII(sku, noun[:3])
	for i := range sku {
		sku[i] -= 'a' - 'A'
	}
	sku = append(sku, '-')
	sku = strconv.AppendInt(sku, int64(id%100000), 10)
	return product{
		id:     id,
		sku:    string(sku),
		noun:   noun,
		title:  adj + " " + noun,
		cents:  s.price(),
		vendor: s.pick(vendors),
	}
}
