package wsproto

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/flate"
)

// clientFrame builds a masked frame as a client sends it.
func clientFrame(fin, rsv1 bool, op Opcode, p []byte) []byte {
	mask := [4]byte{1, 2, 3, 4}
	f := AppendHeader(nil, fin, rsv1, op, len(p), &mask)
	start := len(f)
	f = append(f, p...)
	Mask(mask, 0, f[start:])
	return f
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 65535, 65536, 1 << 20} {
		for _, masked := range []bool{false, true} {
			var mask *[4]byte
			if masked {
				mask = &[4]byte{9, 8, 7, 6}
			}
			b := AppendHeader(nil, true, true, OpBinary, n, mask)
			if !masked && len(b) != HeaderLen(n) {
				t.Errorf("n=%d: header of %d bytes, HeaderLen says %d", n, len(b), HeaderLen(n))
			}
			var buf [MaxHeaderLen]byte
			h, err := ReadHeader(bytes.NewReader(b), &buf, masked)
			if err != nil || h.Length != int64(n) || !h.Fin || !h.RSV1 || h.Opcode != OpBinary || (masked && h.Mask != *mask) {
				t.Errorf("n=%d masked=%v: %+v %v", n, masked, h, err)
			}
		}
	}
}

func TestMaskOffsets(t *testing.T) {
	key := [4]byte{0xde, 0xad, 0xbe, 0xef}
	src := bytes.Repeat([]byte("0123456789abcdef"), 5)
	want := bytes.Clone(src)
	for i := range want {
		want[i] ^= key[i%4]
	}
	for split := range len(src) {
		got := bytes.Clone(src)
		pos := Mask(key, 0, got[:split])
		Mask(key, pos, got[split:])
		if !bytes.Equal(got, want) {
			t.Fatalf("split at %d: wrong mask", split)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		name  string
		input []byte
		code  uint16
		big   bool
	}{
		{"rsv2", []byte{0xa1, 0x80, 0, 0, 0, 0}, CloseProtocolError, false},
		{"reserved opcode", clientFrame(true, false, 0xb, nil), CloseProtocolError, false},
		{"unmasked", []byte{0x81, 0x01, 'x'}, CloseProtocolError, false},
		{"long ping", clientFrame(true, false, OpPing, make([]byte, 126)), CloseProtocolError, false},
		{"fragmented ping", clientFrame(false, false, OpPing, nil), CloseProtocolError, false},
		{"lone continuation", clientFrame(true, false, OpContinuation, []byte("x")), CloseProtocolError, false},
		{"text inside fragments", append(clientFrame(false, false, OpText, []byte("a")), clientFrame(true, false, OpText, []byte("b"))...), CloseProtocolError, false},
		{"rsv1 without deflate", clientFrame(true, true, OpText, []byte("x")), CloseProtocolError, false},
		{"bad utf8", clientFrame(true, false, OpText, []byte{0xc3}), CloseInvalidPayload, false},
		{"huge length", []byte{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, CloseProtocolError, false},
		{"too big", clientFrame(true, false, OpBinary, make([]byte, 101)), 0, true},
		{"close with one byte", clientFrame(true, false, OpClose, []byte{3}), CloseProtocolError, false},
		{"close with code 1005", clientFrame(true, false, OpClose, []byte{0x03, 0xed}), CloseProtocolError, false},
	}
	for _, tc := range cases {
		r := Reader{R: bytes.NewReader(tc.input), Masked: true, MaxMessage: 100}
		_, _, err := r.ReadMessage()
		var pe *ProtocolError
		switch {
		case tc.big:
			if !errors.Is(err, ErrTooBig) {
				t.Errorf("%s: %v, want ErrTooBig", tc.name, err)
			}
		case !errors.As(err, &pe) || pe.Code != tc.code:
			t.Errorf("%s: %v, want protocol error %d", tc.name, err, tc.code)
		}
	}
	// A truncated frame is io.ErrUnexpectedEOF; nothing at all is io.EOF.
	r := Reader{R: bytes.NewReader(clientFrame(true, false, OpText, []byte("hello"))[:5]), Masked: true, MaxMessage: 100}
	if _, _, err := r.ReadMessage(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v", err)
	}
	r = Reader{R: bytes.NewReader(nil), Masked: true, MaxMessage: 100}
	if _, _, err := r.ReadMessage(); err != io.EOF {
		t.Errorf("empty: %v", err)
	}
}

// With takeover, each message may refer to the ones before it.
func TestReaderTakeover(t *testing.T) {
	var wire bytes.Buffer
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, 5)
	msgs := [][]byte{[]byte(`{"price":100,"symbol":"ABC"}`), []byte(`{"price":101,"symbol":"ABC"}`), bytes.Repeat([]byte("z"), 40000), []byte(`{"price":101,"symbol":"ABC"}`)}
	for _, m := range msgs {
		out.Reset()
		w.Write(m)
		w.Flush()
		body := bytes.TrimSuffix(out.Bytes(), []byte{0, 0, 0xff, 0xff})
		wire.Write(AppendHeader(nil, true, true, OpText, len(body), nil))
		wire.Write(body)
	}
	r := Reader{R: &wire, MaxMessage: 1 << 20, Deflate: true, Takeover: true}
	for i, m := range msgs {
		_, got, err := r.ReadMessage()
		if err != nil || !bytes.Equal(got, m) {
			t.Fatalf("message %d: %v %.30q", i, err, got)
		}
	}
}

func TestParseExtensions(t *testing.T) {
	exts, err := ParseExtensions([]string{`permessage-deflate; client_max_window_bits; server_max_window_bits="10", foo`, "bar;a=b"})
	if err != nil || len(exts) != 3 || exts[0].Name != DeflateName || exts[2].Params[0] != (Param{"a", "b", true}) {
		t.Fatalf("%+v %v", exts, err)
	}
	d, err := ParseDeflate(exts[0])
	if err != nil || d.ClientMaxWindowBits != -1 || d.ServerMaxWindowBits != 10 {
		t.Fatalf("%+v %v", d, err)
	}
	for _, bad := range []string{"a;", "a;=b", `a; b="x`, "a b", "a;b=08"} {
		exts, err := ParseExtensions([]string{bad})
		if err == nil {
			for _, e := range exts {
				if e.Name == "a" {
					_, err = ParseDeflate(e)
				}
			}
		}
		if err == nil {
			t.Errorf("%q parsed: %+v", bad, exts)
		}
	}
}

// FuzzReadMessage feeds arbitrary bytes to a server's reader with
// permessage-deflate on: it must return a message or an error, never
// panic, never hang, and never return more than MaxMessage bytes.
func FuzzReadMessage(f *testing.F) {
	f.Add(clientFrame(true, false, OpText, []byte("hello")))
	f.Add(append(clientFrame(false, false, OpBinary, []byte("ab")), clientFrame(true, false, OpContinuation, []byte("cd"))...))
	f.Add(clientFrame(true, true, OpText, []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}))
	f.Add(clientFrame(true, false, OpPing, []byte("p")))
	f.Add(clientFrame(true, false, OpClose, []byte{0x03, 0xe8, 'b', 'y', 'e'}))
	f.Add([]byte{0x82, 0xfe, 0xff, 0xff, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 4096
		r := Reader{R: bytes.NewReader(data), Masked: true, MaxMessage: max, Deflate: true, Takeover: len(data)%2 == 0}
		for range 64 {
			_, p, err := r.ReadMessage()
			if err != nil {
				return
			}
			if len(p) > max {
				t.Fatalf("message of %d bytes past the limit", len(p))
			}
		}
	})
}

// FuzzParseExtensions: any header parses or fails cleanly, and what
// parses as permessage-deflate formats to an offer that parses the same.
func FuzzParseExtensions(f *testing.F) {
	f.Add("permessage-deflate; client_max_window_bits")
	f.Add(`permessage-deflate; server_max_window_bits="12"; server_no_context_takeover, x`)
	f.Fuzz(func(t *testing.T, s string) {
		exts, err := ParseExtensions([]string{s})
		if err != nil {
			return
		}
		for _, e := range exts {
			d, err := ParseDeflate(e)
			if err != nil || e.Name != DeflateName {
				continue
			}
			again, err := ParseExtensions([]string{d.String()})
			if err != nil || len(again) != 1 {
				t.Fatalf("%q formats to %q, which does not parse: %v", s, d.String(), err)
			}
			if d2, err := ParseDeflate(again[0]); err != nil || d2 != d {
				t.Fatalf("%q: %+v formats to %q, parsed back as %+v (%v)", s, d, d.String(), d2, err)
			}
		}
	})
}

// Window bits are the canonical decimal digits of 8 to 15 and nothing
// else (RFC 7692 section 7.1), quoted or not.
func TestWindowBitsCanonical(t *testing.T) {
	for _, v := range []string{"8", "9", "10", "15", `"12"`} {
		exts, err := ParseExtensions([]string{"permessage-deflate; server_max_window_bits=" + v + "; client_max_window_bits=" + v})
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDeflate(exts[0])
		if err != nil || d.ServerMaxWindowBits < 8 || d.ServerMaxWindowBits != d.ClientMaxWindowBits {
			t.Errorf("%s: %+v %v", v, d, err)
		}
	}
	for _, v := range []string{"+15", `"+15"`, "-8", "015", "08", "7", "16", "150", "1_5", "15.0", "0xf", `""`, `" 15"`} {
		for _, name := range []string{"server_max_window_bits", "client_max_window_bits"} {
			exts, err := ParseExtensions([]string{"permessage-deflate; " + name + "=" + v})
			if err != nil {
				continue // not even a header
			}
			if d, err := ParseDeflate(exts[0]); err == nil {
				t.Errorf("%s=%s accepted as %+v", name, v, d)
			}
		}
	}
}

// Close codes a peer may send: RFC 6455's registry, 1012-1014 included,
// and the 3000-4999 ranges; never 1004-1006, 1015 or unassigned ones.
func TestParseCloseCodes(t *testing.T) {
	for code := range uint16(5100) {
		want := code >= 1000 && code <= 1003 || code >= 1007 && code <= 1014 || code >= 3000 && code <= 4999
		got, _, err := ParseClose([]byte{byte(code >> 8), byte(code)})
		if (err == nil) != want || (want && got != code) {
			t.Errorf("code %d: %d %v, valid should be %v", code, got, err, want)
		}
	}
}

// A message in many small fragments costs a few allocations, not one copy
// of everything so far per fragment: 64 KiB in 1-byte fragments.
func TestFragmentsAssembleInLinearTime(t *testing.T) {
	const size = 64 << 10
	var wire bytes.Buffer
	for i := range size {
		op := OpContinuation
		if i == 0 {
			op = OpBinary
		}
		wire.Write(clientFrame(i == size-1, false, op, []byte{byte(i)}))
	}
	input := wire.Bytes()
	var got []byte
	allocs := testing.AllocsPerRun(1, func() {
		r := Reader{R: bytes.NewReader(input), Masked: true, MaxMessage: size}
		var err error
		if _, got, err = r.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != size || got[size-1] != byte((size-1)%256) {
		t.Fatalf("assembled %d bytes", len(got))
	}
	if cap(got) > size {
		t.Errorf("capacity %d past MaxMessage %d", cap(got), size)
	}
	if allocs > 100 {
		t.Errorf("%.0f allocations to assemble %d fragments, want a few dozen at most", allocs, size)
	}
}
