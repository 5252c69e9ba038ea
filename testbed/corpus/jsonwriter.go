package corpus

import "strconv"

// jsonWriter appends compact JSON, keeping commas and nesting right, so
// builders can grow a document one field or item at a time and take the
// last one back (see add).
type jsonWriter struct {
	b        []byte
	first    []bool // per open object or array: no element written yet
	afterKey bool   // a key was written; the next value needs no comma
}

func (w *jsonWriter) reset(buf []byte) {
	w.b = buf[:0]
	w.first = w.first[:0]
	w.afterKey = false
}

// sep writes the comma before a value or key, if one is needed.
func (w *jsonWriter) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.b = append(w.b, ',')
		}
		w.first[n-1] = false
	}
}

func (w *jsonWriter) open(c byte) {
	w.sep()
	w.b = append(w.b, c)
	w.first = append(w.first, true)
}

func (w *jsonWriter) obj() { w.open('{') }
func (w *jsonWriter) arr() { w.open('[') }

// end closes the innermost object or array.
func (w *jsonWriter) end(c byte) {
	w.b = append(w.b, c)
	w.first = w.first[:len(w.first)-1]
}

func (w *jsonWriter) endObj() { w.end('}') }
func (w *jsonWriter) endArr() { w.end(']') }

func (w *jsonWriter) key(k string) {
	w.sep()
	w.b = appendJSONString(w.b, k)
	w.b = append(w.b, ':')
	w.afterKey = true
}

func (w *jsonWriter) str(v string) {
	w.sep()
	w.b = appendJSONString(w.b, v)
}

func (w *jsonWriter) strb(v []byte) {
	w.sep()
	w.b = appendJSONString(w.b, v)
}

func (w *jsonWriter) int(v int64) {
	w.sep()
	w.b = strconv.AppendInt(w.b, v, 10)
}

// dec writes v/10^places as a JSON number, e.g. dec(45, 1) is 4.5.
func (w *jsonWriter) dec(v, places int) {
	w.sep()
	s := strconv.Itoa(v)
	for len(s) <= places {
		s = "0" + s
	}
	w.b = append(w.b, s[:len(s)-places]...)
	w.b = append(w.b, '.')
	w.b = append(w.b, s[len(s)-places:]...)
}

func (w *jsonWriter) bool(v bool) {
	w.sep()
	w.b = strconv.AppendBool(w.b, v)
}

func (w *jsonWriter) null() {
	w.sep()
	w.b = append(w.b, "null"...)
}

// Shorthands for a key and its value.
func (w *jsonWriter) kstr(k, v string)         { w.key(k); w.str(v) }
func (w *jsonWriter) kstrb(k string, v []byte) { w.key(k); w.strb(v) }
func (w *jsonWriter) kint(k string, v int64)   { w.key(k); w.int(v) }
func (w *jsonWriter) kbool(k string, v bool)   { w.key(k); w.bool(v) }
func (w *jsonWriter) kobj(k string)            { w.key(k); w.obj() }
func (w *jsonWriter) karr(k string)            { w.key(k); w.arr() }

// size is the length the document would have if closed now: every open
// object and array takes one more byte.
func (w *jsonWriter) size() int { return len(w.b) + len(w.first) }

// mark is a point in the document that restore can go back to, as long
// as the document has not closed a container opened before it.
type mark struct {
	n, depth int
	first    bool
}

func (w *jsonWriter) mark() mark {
	m := mark{n: len(w.b), depth: len(w.first)}
	if m.depth > 0 {
		m.first = w.first[m.depth-1]
	}
	return m
}

func (w *jsonWriter) restore(m mark) {
	w.b = w.b[:m.n]
	w.first = w.first[:m.depth]
	if m.depth > 0 {
		w.first[m.depth-1] = m.first
	}
	w.afterKey = false
}

// add writes one element (a key and value, or an array item) with fn and
// keeps it only if keep agrees, for a document aiming at target bytes.
// It reports whether the element was kept and the document is still short
// of target, which is when a caller that grows a list should go on.
func (w *jsonWriter) add(target int, fn func()) bool {
	m, before := w.mark(), w.size()
	fn()
	if keep(before, w.size(), target) {
		return w.size() < target
	}
	w.restore(m)
	return false
}

// written is how many bytes the fragment holds so far.
func (w *jsonWriter) written() int { return len(w.b) }

// list writes key and an array of items made by fn: minN items whatever
// the size, then more while the document is short of target, up to maxN
// in all. A list that ends up empty is taken out again, key and all, since
// it would only pad the document. It returns the number of items.
func (w *jsonWriter) list(target int, key string, minN, maxN int, fn func()) int {
	m := w.mark()
	w.karr(key)
	for i := 0; i < minN; i++ {
		fn()
	}
	n := minN
	if maxN > minN {
		n += grow(w, target, maxN-minN, fn)
	}
	if n == 0 {
		w.restore(m)
		return 0
	}
	w.endArr()
	return n
}

// optional adds each field in order while the document is short of t,
// skipping a field that would overshoot by more than it gains.
func (w *jsonWriter) optional(t int, fields ...func()) {
	for _, f := range fields {
		if w.size() >= t {
			return
		}
		w.add(t, f)
	}
}

// appendJSONString appends s as a JSON string. Only the quote, the
// backslash and control characters are escaped; other UTF-8 is written as
// is, as most JSON encoders outside Go do (Go's also escapes <, > and &).
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
