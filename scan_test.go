package zipline

import (
	"context"
	"testing"
)

// The key "" is a key: HSCAN, SSCAN and ZSCAN of it scan it, where they
// used to send SCAN's arguments (no key at all) and fail.
func TestScanOfTheEmptyKey(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	must(c.HSet(ctx, "", FieldValue{"f", []byte("v")}))(t)
	n := 0
	for fv, err := range c.HScan(ctx, "", ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if fv.Field != "f" || string(fv.Value) != "v" {
			t.Errorf("HSCAN \"\" = %+v", fv)
		}
		n++
	}
	eq(t, "HSCAN \"\" fields", n, 1)
	must(c.Del(ctx, ""))(t)
	must(c.SAdd(ctx, "", "m"))(t)
	for m, err := range c.SScan(ctx, "", ScanOptions{}) {
		if err != nil || m != "m" {
			t.Errorf("SSCAN \"\" = %q, %v", m, err)
		}
	}
	must(c.Del(ctx, ""))(t)
	must(c.ZAdd(ctx, "", Z{"m", 1}))(t)
	for z, err := range c.ZScan(ctx, "", ScanOptions{}) {
		if err != nil || z.Member != "m" {
			t.Errorf("ZSCAN \"\" = %+v, %v", z, err)
		}
	}
}
