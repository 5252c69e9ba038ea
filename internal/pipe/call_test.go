package pipe

import (
	"testing"
	"unsafe"
)

// TestCallLayout holds a Call to the layout its comment describes: 256
// bytes, a size class whose objects start on a cache line, with each group
// of fields on its own line. A field added in the wrong place moves the
// lines, and with them the cost of every call (bench/RESULTS.md#client-ab).
func TestCallLayout(t *testing.T) {
	var c Call
	if got := unsafe.Sizeof(c); got != 256 {
		t.Errorf("Call is %d bytes, want 256", got)
	}
	for _, f := range []struct {
		name      string
		off, size uintptr
		line      uintptr
	}{
		{"Buf", unsafe.Offsetof(c.Buf), unsafe.Sizeof(c.Buf), 0},
		{"closeMarker", unsafe.Offsetof(c.closeMarker), unsafe.Sizeof(c.closeMarker), 0},
		{"state", unsafe.Offsetof(c.state), unsafe.Sizeof(c.state), 1},
		{"charged", unsafe.Offsetof(c.charged), unsafe.Sizeof(c.charged), 1},
		{"one", unsafe.Offsetof(c.one), unsafe.Sizeof(c.one), 2},
		{"Patience", unsafe.Offsetof(c.Patience), unsafe.Sizeof(c.Patience), 3},
		{"budget", unsafe.Offsetof(c.budget), unsafe.Sizeof(c.budget), 3},
	} {
		if first, last := f.off/64, (f.off+f.size-1)/64; first != f.line || last != f.line {
			t.Errorf("Call.%s spans lines %d-%d, want line %d", f.name, first, last, f.line)
		}
	}
	// Objects of 256 bytes are carved from spans at multiples of 256, so
	// the lines above are the machine's lines.
	p := NewCallPool()
	for range 16 {
		if c := p.Get(); uintptr(unsafe.Pointer(c))%64 != 0 {
			t.Fatalf("a pooled Call starts at %p, not on a 64-byte line", c)
		}
	}
}
