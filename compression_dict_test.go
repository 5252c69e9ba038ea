package zipline

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline/codec"
)

// dictRecords returns n JSON user records of 150-500 bytes: the small values
// a dictionary is for.
func dictRecords(seed uint64, n int) [][]byte {
	type address struct {
		Street  string `json:"street"`
		City    string `json:"city"`
		Country string `json:"country"`
	}
	type user struct {
		ID        int      `json:"id"`
		Name      string   `json:"name"`
		Email     string   `json:"email"`
		Active    bool     `json:"active"`
		Roles     []string `json:"roles"`
		Address   *address `json:"address,omitempty"`
		CreatedAt string   `json:"created_at"`
		Score     float64  `json:"score"`
	}
	first := []string{"ada", "grace", "alan", "edsger", "barbara", "donald", "frances", "ken"}
	last := []string{"lovelace", "hopper", "turing", "dijkstra", "liskov", "knuth", "allen", "thompson"}
	cities := []string{"London", "Paris", "Berlin", "Lisbon", "Oslo", "Vienna"}
	roles := []string{"admin", "editor", "viewer", "billing", "support"}
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([][]byte, n)
	for i := range out {
		f, l := first[r.IntN(len(first))], last[r.IntN(len(last))]
		u := user{
			ID: r.IntN(1_000_000), Name: f + " " + l, Email: f + "." + l + "@example.com", Active: r.IntN(2) == 0,
			CreatedAt: fmt.Sprintf("2025-%02d-%02dT%02d:%02d:00Z", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60)),
			Score:     float64(r.IntN(10000)) / 100,
		}
		for range 1 + r.IntN(4) {
			u.Roles = append(u.Roles, roles[r.IntN(len(roles))])
		}
		if r.IntN(3) > 0 {
			u.Address = &address{Street: strconv.Itoa(1+r.IntN(200)) + " " + last[r.IntN(len(last))] + " Road",
				City: cities[r.IntN(len(cities))], Country: "EU"}
		}
		out[i], _ = json.Marshal(u)
	}
	return out
}

// TestCompressionDictionary: JSON records written with a trained dictionary
// read back equal, stored far smaller; a Client without the dictionary reads
// the stored bytes, without error.
func TestCompressionDictionary(t *testing.T) {
	dict, err := codec.TrainDictionary(dictRecords(1, 1000), 0)
	if err != nil {
		t.Fatal(err)
	}
	c, srv := newTestClient(t, Options{Compression: Compression{Backend: codec.ZstdDict, Dictionary: dict}})
	ctx := context.Background()
	values := dictRecords(2, 60)
	for i, v := range values[:50] {
		if err := c.Set(ctx, "user:"+strconv.Itoa(i), v); err != nil {
			t.Fatal(err)
		}
	}
	var kvs []KeyValue
	for i, v := range values[50:] {
		kvs = append(kvs, KeyValue{"user:" + strconv.Itoa(50+i), v})
	}
	if err := c.MSet(ctx, kvs...); err != nil {
		t.Fatal(err)
	}
	stored, plain := 0, 0
	for i, v := range values {
		key := "user:" + strconv.Itoa(i)
		got, err := c.Get(ctx, key)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%s: Get = %q, %v; want %q", key, got, err, v)
		}
		raw, err := c.Raw().Get(ctx, key)
		if err != nil || !codec.IsCompressed(raw) || raw[4] != byte(codec.ZstdDict) || len(raw) >= len(v) {
			t.Fatalf("%s: stored %d bytes for %d (header % x), %v", key, len(raw), len(v), raw[:min(5, len(raw))], err)
		}
		stored += len(raw)
		plain += len(v)
	}
	got, err := c.MGet(ctx, "user:0", "user:55", "missing")
	if err != nil || len(got) != 3 || !bytes.Equal(got[0], values[0]) || !bytes.Equal(got[1], values[55]) || got[2] != nil {
		t.Fatalf("MGet: %q, %v", got, err)
	}
	st := c.Stats().Compression
	t.Logf("%d records, %d bytes, stored in %d (%.2f); dictionary %d bytes", len(values), plain, stored, float64(stored)/float64(plain), len(dict))
	if st.Compressed != uint64(len(values)) || st.Ratio() > 0.5 {
		t.Errorf("stats %+v, ratio %.2f", st, st.Ratio())
	}

	// A zstd Client without the dictionary gets the stored bytes back.
	other, err := New(Options{Addr: srv.Addr, Compression: Compression{Backend: codec.Zstd}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	raw, _ := c.Raw().Get(ctx, "user:0")
	got0, err := other.Get(ctx, "user:0")
	if err != nil || !bytes.Equal(got0, raw) || !codec.IsCompressed(got0) || got0[4] != 0x81 {
		t.Errorf("zstd Client without the dictionary: %x, %v; want the stored bytes %x", got0, err, raw)
	}
	if s := other.Stats().Compression; s.Invalid != 1 || s.Decompressed != 0 {
		t.Errorf("zstd Client without the dictionary: stats %+v", s)
	}
	// An LZ4 Client with the dictionary reads the values.
	reader, err := New(Options{Addr: srv.Addr, Compression: Compression{Backend: codec.LZ4, Dictionary: dict}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if got, err := reader.Get(ctx, "user:7"); err != nil || !bytes.Equal(got, values[7]) {
		t.Errorf("LZ4 Client with the dictionary: %q, %v", got, err)
	}

	// ZstdDict needs a valid dictionary.
	for _, d := range [][]byte{nil, []byte("not a dictionary")} {
		if _, err := New(Options{Addr: srv.Addr, Compression: Compression{Backend: codec.ZstdDict, Dictionary: d}, Logger: quiet}); err == nil ||
			!strings.Contains(err.Error(), "Options.Compression") {
			t.Errorf("dictionary %q: %v", d, err)
		}
	}
}

// TestCompressionDictionaryGLIDE: a GLIDE client, configured for either of
// its backends, reads a ZstdDict value as the stored bytes (it does not know
// id 0x81), without error.
func TestCompressionDictionaryGLIDE(t *testing.T) {
	py := glidePython(t)
	dict, err := codec.TrainDictionary(dictRecords(1, 1000), 0)
	if err != nil {
		t.Fatal(err)
	}
	c, srv := newTestClient(t, Options{Compression: Compression{Backend: codec.ZstdDict, Dictionary: dict}})
	ctx := context.Background()
	var cases []interopCase
	for i, v := range dictRecords(3, 6) {
		key := "d:" + strconv.Itoa(i)
		if err := c.Set(ctx, key, v); err != nil {
			t.Fatal(err)
		}
		raw, err := c.Raw().Get(ctx, key)
		if err != nil || !codec.IsCompressed(raw) || raw[4] != 0x81 {
			t.Fatalf("%s: stored %x, %v", key, raw, err)
		}
		cases = append(cases, interopCase{Key: key, Op: []string{"set", "mset", "setex"}[i%3], ValueHex: hex.EncodeToString(raw)})
	}
	for _, backend := range []codec.Backend{codec.Zstd, codec.LZ4} {
		runGLIDE(t, py, "read", strconv.Itoa(srv.Port), backend.String(), cases)
	}
}
