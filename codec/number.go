package codec

// isNumber reports whether the server would read b as a number: an integer
// (INCR, INCRBY, HINCRBY...) or a float (INCRBYFLOAT, HINCRBYFLOAT). Such a
// value is never compressed, whatever its length, so that the counter
// commands keep working on it: a compressed "1111111111111111111" would make
// INCR fail. The test is the servers' own, read from their parsers:
// string2ll for integers, and string2ld, which takes what C's strtold takes
// from the first byte to the last (decimal or hexadecimal, with an exponent,
// "inf" or "infinity") in strings under 5 KiB. It errs on the side of
// "number": a string strtold reads but the server refuses later (a NaN, an
// overflow) is left uncompressed too, which only costs its compression.
func isNumber(b []byte) bool {
	const maxFloatLen = 5*1024 - 1 // the servers' MAX_LONG_DOUBLE_CHARS, exclusive
	if len(b) == 0 || len(b) > maxFloatLen {
		return false
	}
	i := 0
	if b[0] == '+' || b[0] == '-' {
		i++
	}
	if rest := b[i:]; equalFoldASCII(rest, "inf") || equalFoldASCII(rest, "infinity") {
		return true
	}
	if len(b)-i > 2 && b[i] == '0' && (b[i+1] == 'x' || b[i+1] == 'X') {
		return isFloatBody(b[i+2:], isHexDigit, 'p')
	}
	return isFloatBody(b[i:], isDigit, 'e')
}

// isFloatBody reports whether b is digits with at most one '.', at least
// one digit, and then, optionally, an exponent: expMark (either case), an
// optional sign, and decimal digits.
func isFloatBody(b []byte, digit func(byte) bool, expMark byte) bool {
	i, digits, dot := 0, 0, false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case digit(c):
			digits++
			continue
		case c == '.' && !dot:
			dot = true
			continue
		}
		break
	}
	if digits == 0 {
		return false
	}
	if i == len(b) {
		return true
	}
	if b[i]|0x20 != expMark {
		return false
	}
	i++
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	if i == len(b) {
		return false
	}
	for ; i < len(b); i++ {
		if !isDigit(b[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// equalFoldASCII reports whether b equals the lower-case word w, ignoring
// ASCII case.
func equalFoldASCII(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}
