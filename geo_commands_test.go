package zipline

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/ziplinekv/zipline/internal/testkit"
)

func TestGeo(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, _ testkit.Kind) {
		ctx := context.Background()
		eq(t, "GeoAdd", must(c.GeoAdd(ctx, "g",
			GeoLocation{Name: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
			GeoLocation{Name: "Catania", Longitude: 15.087269, Latitude: 37.502669}))(t), int64(2))
		pos := must(c.GeoPos(ctx, "g", "Palermo", "nowhere"))(t)
		if len(pos) != 2 || pos[1] != nil || math.Abs(pos[0].Longitude-13.361389) > 1e-4 || math.Abs(pos[0].Latitude-38.115556) > 1e-4 {
			t.Errorf("GeoPos = %+v", pos)
		}
		if d := must(c.GeoDist(ctx, "g", "Palermo", "Catania", "km"))(t); math.Abs(d-166.2742) > 0.01 {
			t.Errorf("GeoDist = %v km", d)
		}
		if _, err := c.GeoDist(ctx, "g", "Palermo", "nowhere", ""); !errors.Is(err, Nil) {
			t.Errorf("GeoDist to a missing member: %v", err)
		}
		hashes := must(c.GeoHash(ctx, "g", "Palermo", "Catania"))(t)
		if len(hashes) != 2 || hashes[0] != "sqc8b49rny0" {
			t.Errorf("GeoHash = %q", hashes)
		}
		q := GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, Unit: "km", Sort: "ASC"}
		eq(t, "GeoSearch", slices.Equal(must(c.GeoSearch(ctx, "g", q))(t), []string{"Catania", "Palermo"}), true)
		near := must(c.GeoSearch(ctx, "g", GeoSearchQuery{Member: "Palermo", BoxWidth: 400, BoxHeight: 400, Unit: "km", Sort: "DESC", Count: 1}))(t)
		eq(t, "GeoSearch BYBOX DESC COUNT 1", slices.Equal(near, []string{"Catania"}), true)
		locs := must(c.GeoSearchLocation(ctx, "g", GeoSearchLocationQuery{GeoSearchQuery: q, WithCoord: true, WithDist: true, WithHash: true}))(t)
		if len(locs) != 2 || locs[0].Name != "Catania" || math.Abs(locs[0].Dist-56.4413) > 0.01 || locs[0].GeoHash == 0 ||
			math.Abs(locs[0].Longitude-15.087269) > 1e-4 {
			t.Errorf("GeoSearchLocation = %+v", locs)
		}
		names := must(c.GeoSearchLocation(ctx, "g", GeoSearchLocationQuery{GeoSearchQuery: q}))(t)
		if len(names) != 2 || names[1].Name != "Palermo" {
			t.Errorf("GeoSearchLocation without options = %+v", names)
		}
		eq(t, "GeoSearchStore", must(c.GeoSearchStore(ctx, "g2", "g", q, false))(t), int64(2))
		eq(t, "GeoSearchStore STOREDIST", must(c.GeoSearchStore(ctx, "g3", "g", q, true))(t), int64(2))
		if d := must(c.ZScore(ctx, "g3", "Catania"))(t); math.Abs(d-56.4413) > 0.01 {
			t.Errorf("stored distance %v", d)
		}
	})
}

func TestBitmapsAndHyperLogLog(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, _ testkit.Kind) {
		ctx := context.Background()
		eq(t, "SetBit", must(c.SetBit(ctx, "b", 7, 1))(t), int64(0))
		eq(t, "SetBit again", must(c.SetBit(ctx, "b", 7, 1))(t), int64(1))
		must(c.SetBit(ctx, "b", 8, 1))(t)
		eq(t, "GetBit", must(c.GetBit(ctx, "b", 7))(t), int64(1))
		eq(t, "GetBit past the end", must(c.GetBit(ctx, "b", 1000))(t), int64(0))
		eq(t, "BitCount", must(c.BitCount(ctx, "b", BitRange{}))(t), int64(2))
		eq(t, "BitCount bytes 0-0", must(c.BitCount(ctx, "b", Bytes(0, 0)))(t), int64(1))
		eq(t, "BitCount bits 8-15", must(c.BitCount(ctx, "b", Bits(8, 15)))(t), int64(1))
		eq(t, "BitPos 1", must(c.BitPos(ctx, "b", 1, BitRange{}))(t), int64(7))
		eq(t, "BitPos 1 from byte 1", must(c.BitPos(ctx, "b", 1, Bytes(1, -1)))(t), int64(8))
		must(c.SetBit(ctx, "b2", 7, 1))(t)
		eq(t, "BitOp AND", must(c.BitOp(ctx, "AND", "b3", "b", "b2"))(t), int64(2))
		eq(t, "after AND", must(c.BitCount(ctx, "b3", BitRange{}))(t), int64(1))
		got := must(c.BitField(ctx, "bf", "SET", "u8", "0", "200", "GET", "u8", "0", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "100"))(t)
		if !slices.Equal(got, []int64{0, 200, 0}) {
			t.Errorf("BitField = %v", got)
		}
		eq(t, "BitFieldRO", slices.Equal(must(c.BitFieldRO(ctx, "bf", "GET", "u8", "0"))(t), []int64{200}), true)

		eq(t, "PFAdd", must(c.PFAdd(ctx, "h1", "a", "b", "c"))(t), true)
		eq(t, "PFAdd nothing new", must(c.PFAdd(ctx, "h1", "a"))(t), false)
		must(c.PFAdd(ctx, "h2", "c", "d"))(t)
		eq(t, "PFCount", must(c.PFCount(ctx, "h1"))(t), int64(3))
		eq(t, "PFCount union", must(c.PFCount(ctx, "h1", "h2"))(t), int64(4))
		mustOK(t, c.PFMerge(ctx, "h3", "h1", "h2"))
		eq(t, "after PFMerge", must(c.PFCount(ctx, "h3"))(t), int64(4))
	})
}
