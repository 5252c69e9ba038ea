package layout

import (
	"errors"
	"strconv"
	"strings"
)

// Key zipping shortens stored key names: the namespace's Prefix is replaced
// by its ZipAs (whole, so "user:" never touches "superuser:"), and each
// ':'-separated segment of the rest that is a canonical decimal integer is
// written in base62 ("12345" -> "3d7"), 1.8x shorter.
//
// It is lossless and reversible. A literal segment that could be read back
// as base62 (alphanumeric), or that starts with the escape '0' or the bucket
// marker '#', is escaped with a leading '0'; canonical base62 never starts
// with '0' except "0" itself. So "007" is stored as "0007" and "7" as "7",
// and they never collide; "profile" costs one byte more ("0profile").

const (
	segmentSep   = ':'
	escape       = '0'
	bucketMarker = '#'
	base62Digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

var errNotZipped = errors.New("layout: not a zipped key")

// appendBase62 appends n in base62.
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

func base62Value(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'z':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'Z':
		return uint64(c-'A') + 36, true
	}
	return 0, false
}

// parseBase62 reads canonical base62 (no leading zero but "0").
func parseBase62(s string) (uint64, bool) {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d, ok := base62Value(s[i])
		if !ok || n > (1<<64-1-d)/62 {
			return 0, false
		}
		n = n*62 + d
	}
	return n, true
}

// canonicalUint parses a decimal integer with no sign and no leading zero
// (but "0"), fitting in a uint64: the only integers zipped, so that every
// other spelling survives the round trip.
func canonicalUint(s string) (uint64, bool) {
	if s == "" || len(s) > 20 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	if len(s) < 20 { // cannot overflow
		var n uint64
		for i := 0; i < len(s); i++ {
			n = n*10 + uint64(s[i]-'0')
		}
		return n, true
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if _, ok := base62Value(s[i]); !ok {
			return false
		}
	}
	return true
}

// appendZipTail appends the zipped form of a key's tail (what follows the
// namespace prefix).
func appendZipTail(dst []byte, tail string) []byte {
	for first := true; ; first = false {
		seg, rest, more := strings.Cut(tail, string(segmentSep))
		if !first {
			dst = append(dst, segmentSep)
		}
		switch n, ok := canonicalUint(seg); {
		case ok:
			dst = appendBase62(dst, n)
		case seg == "":
		case seg[0] == escape || seg[0] == bucketMarker || isAlnum(seg):
			dst = append(append(dst, escape), seg...)
		default:
			dst = append(dst, seg...)
		}
		if !more {
			return dst
		}
		tail = rest
	}
}

// unzipTail reverses appendZipTail.
func unzipTail(zipped string) (string, error) {
	var b strings.Builder
	b.Grow(len(zipped) * 2)
	for i, seg := range strings.Split(zipped, string(segmentSep)) {
		if i > 0 {
			b.WriteByte(segmentSep)
		}
		switch {
		case seg == "":
		case seg[0] == escape && len(seg) > 1:
			b.WriteString(seg[1:])
		case isAlnum(seg):
			n, ok := parseBase62(seg)
			if !ok {
				return "", errNotZipped
			}
			b.WriteString(strconv.FormatUint(n, 10))
		case seg[0] == bucketMarker:
			return "", errNotZipped
		default:
			b.WriteString(seg)
		}
	}
	return b.String(), nil
}
