package zipline

import (
	"errors"
	"strings"
)

// glob is a key pattern as the server's KEYS and SCAN MATCH take it
// (Compression.Rules): * any run of bytes, ? one byte, [set] one byte of
// a set ([abc], [a-z], [^a]), \ quoting the next byte. Matching works on
// bytes, as the server's does, and never backtracks more than once per *,
// so a hostile pattern costs at most the product of the two lengths.
type glob struct {
	pattern string
	// prefix is set when the pattern is a literal followed by one *, the
	// common "session:*": matching is then one comparison.
	prefix string
	simple bool
}

// compileGlob checks pattern and prepares it; an unterminated set or a
// trailing backslash is an error, where the server would read past what
// the pattern says.
func compileGlob(pattern string) (glob, error) {
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			if i+1 == len(pattern) {
				return glob{}, errors.New("a trailing backslash quotes nothing")
			}
			i++
		case '[':
			j := i + 1
			for ; j < len(pattern) && pattern[j] != ']'; j++ {
				if pattern[j] == '\\' {
					j++
				}
			}
			if j >= len(pattern) {
				return glob{}, errors.New("a [ has no closing ]")
			}
			i = j
		}
	}
	g := glob{pattern: pattern}
	if rest, ok := strings.CutSuffix(pattern, "*"); ok && !strings.ContainsAny(rest, `*?[\`) {
		g.prefix, g.simple = rest, true
	}
	return g, nil
}

// match reports whether s matches the pattern.
func (g glob) match(s string) bool {
	if g.simple {
		return strings.HasPrefix(s, g.prefix)
	}
	return globMatch(g.pattern, s)
}

// globMatch matches s against p: the classic two-pointer algorithm, which
// on a mismatch goes back to the last * and lets it take one more byte.
func globMatch(p, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0 // the last * seen in p, and where in s it was tried
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; c {
			case '*':
				star, mark = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '[':
				if n, ok := matchSet(p[pi:], s[si]); ok {
					pi += n
					si++
					continue
				}
			case '\\':
				if pi+1 < len(p) && p[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			default:
				if c == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		pi, mark = star+1, mark+1
		si = mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchSet matches b against the set that set (starting with '[') opens,
// and returns the set's length in the pattern and whether b is in it.
func matchSet(set string, b byte) (int, bool) {
	i := 1
	not := i < len(set) && set[i] == '^'
	if not {
		i++
	}
	in := false
	for ; i < len(set) && set[i] != ']'; i++ {
		switch {
		case set[i] == '\\' && i+1 < len(set):
			i++
			in = in || set[i] == b
		case i+2 < len(set) && set[i+1] == '-' && set[i+2] != ']':
			lo, hi := set[i], set[i+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			in = in || lo <= b && b <= hi
			i += 2
		default:
			in = in || set[i] == b
		}
	}
	return i + 1, in != not
}
