package analyze

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// Stored names, as package layout writes them (layout/zip.go, store.go).
// The model needs their lengths; layout does not export how it names
// keys, so this file repeats it, and TestNamesMatchLayout compares both on
// a server, so that a change in layout shows.

const base62Digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func appendBase62(dst []byte, n uint64) []byte {
	if n == 0 {
		return append(dst, '0')
	}
	var buf [11]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = base62Digits[n%62]
		n /= 62
	}
	return append(dst, buf[i:]...)
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// zipTail appends the zipped form of a key's tail (what follows the
// prefix): each ':'-separated canonical integer in base62, literals that
// could be mistaken for base62, or start with '0' or '#', escaped with a
// '0'.
func zipTail(dst []byte, tail string) []byte {
	for first := true; ; first = false {
		seg, rest, more := strings.Cut(tail, ":")
		if !first {
			dst = append(dst, ':')
		}
		switch n, ok := redisUint(seg); {
		case ok:
			dst = appendBase62(dst, n)
		case seg == "":
		case seg[0] == '0' || seg[0] == '#' || isAlnum(seg):
			dst = append(append(dst, '0'), seg...)
		default:
			dst = append(dst, seg...)
		}
		if !more {
			return dst
		}
		tail = rest
	}
}

// layoutNames computes where a namespace puts an application key.
type layoutNames struct {
	prefix, stored string // Prefix, and ZipAs (or Prefix)
	zip            bool
	// dense is the Dense bucket size, or 0; hashed the Hashed bucket count,
	// or 0. Neither: plain keys.
	dense, hashed uint64
	// maxField is the longest field a bucket takes (hash-max-listpack-value).
	maxField int
}

// location of one key: a plain key, or a field of a bucket.
type location struct {
	plain  string
	bucket string
	field  string
}

// locate returns where key lives; key must start with the prefix.
func (n *layoutNames) locate(key string) location {
	tail := key[len(n.prefix):]
	var l location
	if n.zip {
		l.plain = string(zipTail([]byte(n.stored), tail))
	} else {
		l.plain = key
	}
	var b uint64
	var f string
	ok := false
	switch {
	case n.dense > 0:
		if id, isInt := redisUint(tail); isInt {
			b, f, ok = id/n.dense, strconv.FormatUint(id%n.dense, 10), true
		}
	case n.hashed > 0:
		h := fnv.New64a()
		h.Write([]byte(tail))
		b, f, ok = h.Sum64()%n.hashed, tail, true
	}
	if ok && len(f) <= n.maxField {
		l.bucket = string(appendBase62([]byte(n.stored+"#"), b))
		l.field = f
	}
	return l
}

// oversizeKey names the key that holds a bucketed value too large for
// its bucket: "<stored>#{<bucket>}<field>".
func (n *layoutNames) oversizeKey(l location) string {
	return n.stored + "#{" + l.bucket + "}" + l.field
}

// oversizeMarker is what the bucket's field holds for such a value.
var oversizeMarker = []byte("\x00{")
