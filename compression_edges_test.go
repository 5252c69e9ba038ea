package zipline

import (
	"context"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline/codec"
)

// A value the server reads as a number is never stored compressed, however
// long, so INCR, INCRBYFLOAT and their hash kin keep working on it: with
// zstd and MinSize 6 a 19-digit integer used to be compressed (and INCR
// failed), and with the defaults a float string of 72 bytes.
func TestCompressionNeverStoresNumbersCompressed(t *testing.T) {
	ctx := context.Background()
	for _, comp := range []Compression{
		{Backend: codec.Zstd, MinSize: 6, Families: Hashes},
		{Backend: codec.LZ4, Families: Hashes},
	} {
		t.Run(comp.Backend.String(), func(t *testing.T) {
			c, _ := newTestClient(t, Options{Compression: comp})
			long := "1" + strings.Repeat("1", 18)
			float := "1." + strings.Repeat("0", 70)
			mustOK(t, c.Set(ctx, "n", []byte(long)))
			mustOK(t, c.Set(ctx, "f", []byte(float)))
			must(c.HSet(ctx, "h", FieldValue{"n", []byte(long)}, FieldValue{"f", []byte(float)}))(t)
			mustOK(t, c.MSet(ctx, KeyValue{"m", []byte(long)}))
			for _, k := range []string{"n", "f", "m"} {
				if compressed(t, c, k) {
					t.Errorf("%s: a number was stored compressed", k)
				}
			}
			if n, err := c.Incr(ctx, "n"); err != nil || n != 1111111111111111112 {
				t.Errorf("INCR = %d, %v", n, err)
			}
			if n, err := c.Incr(ctx, "m"); err != nil || n != 1111111111111111112 {
				t.Errorf("INCR after MSET = %d, %v", n, err)
			}
			if f, err := c.IncrByFloat(ctx, "f", 0.5); err != nil || f != 1.5 {
				t.Errorf("INCRBYFLOAT = %v, %v", f, err)
			}
			if n, err := c.HIncrBy(ctx, "h", "n", 1); err != nil || n != 1111111111111111112 {
				t.Errorf("HINCRBY = %d, %v", n, err)
			}
			if f, err := c.HIncrByFloat(ctx, "h", "f", 0.5); err != nil || f != 1.5 {
				t.Errorf("HINCRBYFLOAT = %v, %v", f, err)
			}
			// A long value that is not a number is still compressed.
			mustOK(t, c.Set(ctx, "j", []byte(strings.Repeat(`{"n":1}`, 40))))
			if !compressed(t, c, "j") {
				t.Error("a long JSON value was not compressed")
			}
		})
	}
}
