package analyze

import (
	"strconv"
	"strings"
)

// Key shapes. A key is cut at ':' into segments, and each segment that
// looks like a value rather than a name is replaced by its class:
//
//	<int>     a canonical decimal integer ("12345"), what key zipping
//	          shortens and Dense buckets hold
//	<num>     other digit runs: leading zeros ("007"), signs, 21+ digits
//	<uuid>    8-4-4-4-12 hex digits
//	<hexN>    N hex digits, N >= 8 ("<hex32>": an MD5, a session id)
//	<date>    an ISO date, with or without a time ("2024-05-01", "2024-05")
//	<ip>      a dotted IPv4 address
//	<email>   something@domain
//	<token>   16+ characters of base64 or base64url with letters and digits
//	<id>      12+ characters mixing letters and digits ("a1b2c3d4e5f6")
//
// and every other segment stays literal. So "user:12345" and "user:7" are
// both user:<int>, and "session:9f86d081884c7d659a2feb5e3f6a0c8b" is
// session:<hex32>. A hash tag's braces stay around the class
// ("{user:<int>}:cart"). Literal segments after the first that take many
// values (user:alice, user:bob...) are merged into <str> afterwards (see
// merge in stats.go).

// maxShapeSegments bounds the segments a shape keeps; the rest of a key
// with more becomes one <rest> segment.
const maxShapeSegments = 12

// shape is a key's shape: its pattern and what the layouts need of it.
type shape struct {
	// pattern is the shape as text: "user:<int>:cart".
	pattern string
	// prefix is the literal start of the key up to and including the
	// delimiter before its first class ("user:"), the namespace a layout
	// can own; "" when the key starts with a class or has none.
	prefix string
	// tailInt says the key is prefix followed by one canonical integer
	// only (a Dense bucket's key), whose value is id.
	tailInt bool
	id      uint64
}

// shapeOf returns the shape of key.
func shapeOf(key string) shape {
	var b strings.Builder
	b.Grow(len(key))
	var s shape
	literal := true // every segment so far is literal
	rest := key
	for i := 0; ; i++ {
		seg, more, cut := rest, "", false
		if j := strings.IndexByte(rest, ':'); j >= 0 {
			seg, more, cut = rest[:j], rest[j+1:], true
		}
		if i > 0 {
			b.WriteByte(':')
		}
		if i == maxShapeSegments-1 && cut {
			b.WriteString("<rest>")
			literal = false
			break
		}
		class := segmentClass(seg)
		if class == "" {
			b.WriteString(seg)
		} else {
			b.WriteString(class)
			if literal {
				literal = false
				s.prefix = key[:len(key)-len(rest)]
				if !cut && class == "<int>" && s.prefix != "" {
					s.tailInt = true
					s.id, _ = strconv.ParseUint(seg, 10, 64)
				}
			}
		}
		if !cut {
			break
		}
		rest = more
	}
	s.pattern = b.String()
	return s
}

// segmentClass returns the class of one segment, or "" if it is literal.
// Braces of a hash tag around it are kept.
func segmentClass(seg string) string {
	inner := seg
	open := strings.HasPrefix(inner, "{")
	if open {
		inner = inner[1:]
	}
	closed := strings.HasSuffix(inner, "}")
	if closed {
		inner = inner[:len(inner)-1]
	}
	c := innerClass(inner)
	if c == "" {
		return ""
	}
	if open {
		c = "{" + c
	}
	if closed {
		c += "}"
	}
	return c
}

func innerClass(s string) string {
	n := len(s)
	if n == 0 {
		return ""
	}
	var digits, lower, upper, hexLetters, other, dashes, dots, ats int
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			digits++
		case 'a' <= c && c <= 'z':
			lower++
			if c <= 'f' {
				hexLetters++
			}
		case 'A' <= c && c <= 'Z':
			upper++
			if c <= 'F' {
				hexLetters++
			}
		case c == '-':
			dashes++
		case c == '.':
			dots++
		case c == '@':
			ats++
		default:
			other++
		}
	}
	letters := lower + upper
	switch {
	case digits == n:
		if _, ok := redisUint(s); ok {
			return "<int>"
		}
		return "<num>"
	case s[0] == '-' && digits == n-1 && n > 1:
		return "<num>"
	case isUUID(s):
		return "<uuid>"
	case n >= 8 && digits+hexLetters == n && letters == hexLetters && (lower == 0 || upper == 0):
		return "<hex" + strconv.Itoa(n) + ">"
	case isDate(s):
		return "<date>"
	case dots == 3 && digits+dots == n && n <= 15:
		return "<ip>"
	case ats == 1 && dots >= 1 && s[0] != '@':
		return "<email>"
	case n >= 16 && digits > 0 && letters > 0 && dots == 0 && ats == 0 && isTokenChars(s):
		return "<token>"
	case n >= 12 && digits > 0 && letters > 0 && other == 0 && dots == 0 && ats == 0 && dashes == 0:
		return "<id>"
	}
	return ""
}

// redisUint parses a canonical unsigned decimal integer (no leading zero
// but "0"), as key zipping and Dense buckets take it.
func redisUint(s string) (uint64, bool) {
	if s == "" || len(s) > 20 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isDate matches YYYY-MM and YYYY-MM-DD, with anything after the day
// ("2024-05-01T10", "2024-05-01.log").
func isDate(s string) bool {
	if len(s) < 7 || s[4] != '-' || !allDigits(s[:4]) || !allDigits(s[5:7]) {
		return false
	}
	if s[0] != '1' && s[0] != '2' {
		return false
	}
	if len(s) == 7 {
		return true
	}
	return len(s) >= 10 && s[7] == '-' && allDigits(s[8:10])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isTokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' ||
			c == '-' || c == '_' || c == '+' || c == '/' || c == '='
		if !ok {
			return false
		}
	}
	return true
}
