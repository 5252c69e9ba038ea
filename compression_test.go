package zipline

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/resp"
)

// vectorsDir holds the GLIDE vectors, kept in the repository (see
// testdata/README.md).
const vectorsDir = "testdata/glide"

func compressed(t *testing.T, c *Client, key string) bool {
	t.Helper()
	raw, err := c.Raw().Get(context.Background(), key)
	if err != nil {
		t.Fatalf("raw GET %s: %v", key, err)
	}
	return codec.IsCompressed(raw)
}

// jsonDoc is a realistic API response: a list of similar records, which is
// what compresses well in practice (about 1.5 KB).
var jsonDoc = func() []byte {
	var b strings.Builder
	b.WriteString(`{"users":[`)
	for i, name := range []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Donald Knuth"} {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":` + itoa(1840+i) + `,"name":"` + name + `","email":"user` + itoa(i) + `@example.com",` +
			`"roles":["admin","editor"],"address":{"city":"London","country":"GB"},"active":true,` +
			`"created":"2026-11-22T00:31:3` + itoa(i) + `Z"}`)
	}
	b.WriteString(`],"page":1,"per_page":6,"total":6}`)
	return []byte(b.String())
}()

func TestCompressionRoundTrip(t *testing.T) {
	for _, backend := range []codec.Backend{codec.Zstd, codec.LZ4} {
		t.Run(backend.String(), func(t *testing.T) {
			c, _ := newTestClient(t, Options{Compression: Compression{Backend: backend}})
			ctx := context.Background()
			small := []byte(strings.Repeat("a", 63))
			random := make([]byte, 1024)
			for i := range random {
				random[i] = byte(rand.Uint32())
			}
			for key, val := range map[string][]byte{"json": jsonDoc, "small": small, "random": random, "empty": {}} {
				if err := c.Set(ctx, key, val); err != nil {
					t.Fatal(err)
				}
				got, err := c.Get(ctx, key)
				if err != nil || !bytes.Equal(got, val) {
					t.Fatalf("%s: got %q, %v", key, got, err)
				}
			}
			if !compressed(t, c, "json") || compressed(t, c, "small") || compressed(t, c, "random") {
				t.Fatal("compression applied to the wrong values")
			}
			raw, _ := c.Raw().Get(ctx, "json")
			if raw[4] != byte(backend) || len(raw) >= len(jsonDoc) {
				t.Fatalf("stored form: id %d, %d bytes for %d", raw[4], len(raw), len(jsonDoc))
			}
			st := c.Stats().Compression
			if st.Compressed != 1 || st.Skipped < 2 || st.Decompressed < 1 || st.Ratio() <= 0 || st.Ratio() >= 1 {
				t.Fatalf("stats %+v ratio %.2f", st, st.Ratio())
			}
		})
	}
}

// Every value GLIDE wrote reads back as its plaintext, whichever backend the
// reading client uses.
func TestCompressionReadsGLIDEVectors(t *testing.T) {
	bins, _ := filepath.Glob(filepath.Join(vectorsDir, "*.bin"))
	if len(bins) == 0 {
		t.Fatalf("no GLIDE vectors in %s (testdata/glide is part of the repository)", vectorsDir)
	}
	for _, backend := range []codec.Backend{codec.Zstd, codec.LZ4} {
		c, _ := newTestClient(t, Options{Compression: Compression{Backend: backend}})
		ctx := context.Background()
		for _, bin := range bins {
			stored, _ := os.ReadFile(bin)
			name := strings.TrimSuffix(filepath.Base(bin), ".bin")
			plain, err := os.ReadFile(filepath.Join(vectorsDir, name[strings.LastIndexByte(name, '_')+1:]+".plain"))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Raw().Set(ctx, name, stored); err != nil {
				t.Fatal(err)
			}
			for _, read := range []func() ([]byte, error){
				func() ([]byte, error) { return c.Get(ctx, name) },
				func() ([]byte, error) { v, err := c.MGet(ctx, name); return v[0], err },
				func() ([]byte, error) { v, err := c.Do(ctx, "GET", name); b, _ := v.AsBytes(); return b, err },
			} {
				got, err := read()
				if err != nil || !bytes.Equal(got, plain) {
					t.Fatalf("%s client reading %s: %d bytes, %v; want %d", backend, name, len(got), err, len(plain))
				}
			}
		}
	}
}

func TestCompressionWriteCommands(t *testing.T) {
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd}})
	ctx := context.Background()
	v := jsonDoc
	check := func(key string) {
		t.Helper()
		if !compressed(t, c, key) {
			t.Errorf("%s stored uncompressed", key)
		}
		got, err := c.Get(ctx, key)
		if err != nil || !bytes.Equal(got, v) {
			t.Errorf("%s reads back %q, %v", key, got, err)
		}
	}
	mustOK(t, c.Set(ctx, "set", v, EX(time.Minute)))
	check("set")
	must(c.SetNX(ctx, "setnx", v))(t)
	check("setnx")
	must(c.SetXX(ctx, "setnx", v, KeepTTL()))(t)
	check("setnx")
	old := must(c.SetGet(ctx, "set", v))(t)
	if !bytes.Equal(old, v) {
		t.Errorf("SET GET old value %q", old)
	}
	old = must(c.GetSet(ctx, "set", v))(t)
	if !bytes.Equal(old, v) {
		t.Errorf("GETSET old value %q", old)
	}
	mustOK(t, c.MSet(ctx, KeyValue{"m1", v}, KeyValue{"m2", v}))
	check("m1")
	check("m2")
	must(c.MSetNX(ctx, KeyValue{"m3", v}, KeyValue{"m4", v}))(t)
	check("m4")
	for _, args := range [][]any{
		{"SET", "do-set", v, "EX", 100}, {"SETNX", "do-setnx", v}, {"SETEX", "do-setex", 100, v},
		{"psetex", "do-psetex", 100000, string(v)}, {"MSET", "do-m1", v, "do-m2", v}, {"MSETNX", "do-m3", v},
		{"GETSET", "do-getset", v},
	} {
		if _, err := c.Do(ctx, args...); err != nil {
			t.Fatalf("%v: %v", args[0], err)
		}
	}
	for _, k := range []string{"do-set", "do-setnx", "do-setex", "do-psetex", "do-m1", "do-m2", "do-m3", "do-getset"} {
		check(k)
	}
	// Reads through Do expand like the typed methods.
	for _, args := range [][]any{{"GET", "set"}, {"GETEX", "set", "EX", 50}, {"SET", "set", v, "GET"}, {"GETSET", "set", v}, {"GETDEL", "do-m3"}} {
		r, err := c.Do(ctx, args...)
		if b, _ := r.AsBytes(); err != nil || !bytes.Equal(b, v) {
			t.Errorf("Do %v = %q, %v", args, b, err)
		}
	}
	r, err := c.Do(ctx, "MGET", "m1", "nope", "m2")
	if err != nil {
		t.Fatal(err)
	}
	elems := must(r.AsSlice())(t)
	if b, _ := elems[0].AsBytes(); !bytes.Equal(b, v) || !elems[1].IsNil() {
		t.Errorf("Do MGET = %v", r)
	}
	ex := must(c.GetEx(ctx, "m1", Persist()))(t)
	del := must(c.GetDel(ctx, "m2"))(t)
	if !bytes.Equal(ex, v) || !bytes.Equal(del, v) {
		t.Error("GETEX/GETDEL did not expand")
	}
	// Batch and Tx compress and expand too.
	for _, b := range []*Batch{c.Batch(), c.Tx()} {
		b.Set("b1", v)
		b.MSet(KeyValue{"b2", v})
		b.Do("SETEX", "b3", 100, v)
		g1 := b.Get("b1")
		g2 := b.MGet("b2", "b3")
		g3 := b.Do("GET", "b3")
		if err := b.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		got3, _ := g3.Val().AsBytes()
		if !bytes.Equal(g1.Val(), v) || !bytes.Equal(g2.Val()[1], v) || !bytes.Equal(got3, v) {
			t.Errorf("batch (tx=%v) reads did not expand", b.tx)
		}
		check("b1")
		check("b3")
	}
}

func TestCompressionRefusesIncompatibleCommands(t *testing.T) {
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.LZ4}})
	ctx := context.Background()
	mustOK(t, c.Set(ctx, "k", jsonDoc))
	for _, args := range [][]any{
		{"APPEND", "k", "x"}, {"SETRANGE", "k", 0, "x"}, {"SETBIT", "k", 0, 1},
		{"BITFIELD", "k", "GET", "u8", 0}, {"BITOP", "AND", "d", "k"},
	} {
		_, err := c.Do(ctx, args...)
		var ce *CommandError
		if !errors.As(err, &ce) || ce.Command != args[0] || !strings.Contains(err.Error(), args[0].(string)) {
			t.Errorf("%v: got %v, want a CommandError naming it", args[0], err)
		}
	}
	if _, err := c.Append(ctx, "k", []byte("x")); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("typed Append: %v", err)
	}
	// The reads are answered on the plaintext, in a Batch too.
	if n, err := c.StrLen(ctx, "k"); err != nil || n != int64(len(jsonDoc)) {
		t.Errorf("STRLEN of a compressed value: %d %v, want %d", n, err, len(jsonDoc))
	}
	if v, err := c.GetRange(ctx, "k", 2, 9); err != nil || !bytes.Equal(v, jsonDoc[2:10]) {
		t.Errorf("GETRANGE of a compressed value: %q %v, want %q", v, err, jsonDoc[2:10])
	}
	b := c.Batch()
	n := b.Do("STRLEN", "k")
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := n.Val().AsInt64(); got != int64(len(jsonDoc)) {
		t.Errorf("STRLEN in a batch: %d", got)
	}
	// The stored value is intact, and counters still work: numbers are
	// below the minimum size, so they are never compressed.
	if got := must(c.Get(ctx, "k"))(t); !bytes.Equal(got, jsonDoc) {
		t.Fatal("value changed")
	}
	if n := must(c.Incr(ctx, "counter"))(t); n != 1 {
		t.Fatalf("INCR = %d", n)
	}
	if n := must(c.IncrBy(ctx, "counter", 1<<40))(t); n != 1<<40+1 {
		t.Fatalf("INCRBY = %d", n)
	}
	// A raw view may use them on values it stored raw.
	if n, err := c.Raw().Append(ctx, "plain", []byte("ab")); err != nil || n != 2 {
		t.Fatalf("Raw().Append: %d %v", n, err)
	}
}

// Hashes and lists stay raw by default (GLIDE's behaviour) and are
// compressed when their family is turned on.
func TestCompressionFamilies(t *testing.T) {
	ctx := context.Background()
	plain, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd}})
	plain.HSet(ctx, "h", FieldValue{"f", jsonDoc})
	plain.RPush(ctx, "l", jsonDoc)
	if raw, _ := plain.Raw().HGet(ctx, "h", "f"); codec.IsCompressed(raw) {
		t.Fatal("hash value compressed without the Hashes family")
	}
	if raw, _ := plain.Raw().LIndex(ctx, "l", 0); codec.IsCompressed(raw) {
		t.Fatal("list element compressed without the Lists family")
	}

	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, Families: Hashes | Lists}})
	must(c.HSet(ctx, "h", FieldValue{"f", jsonDoc}, FieldValue{"g", jsonDoc}))(t)
	must(c.HSetNX(ctx, "h", "n", jsonDoc))(t)
	c.Do(ctx, "HMSET", "h", "m", jsonDoc)
	for _, f := range []string{"f", "g", "n", "m"} {
		raw, _ := c.Raw().HGet(ctx, "h", f)
		if !codec.IsCompressed(raw) {
			t.Errorf("field %s stored raw", f)
		}
	}
	if v := must(c.HGet(ctx, "h", "f"))(t); !bytes.Equal(v, jsonDoc) {
		t.Error("HGET")
	}
	if v := must(c.HMGet(ctx, "h", "g", "x"))(t); !bytes.Equal(v[0], jsonDoc) || v[1] != nil {
		t.Error("HMGET")
	}
	if m := must(c.HGetAll(ctx, "h"))(t); !bytes.Equal(m["n"], jsonDoc) {
		t.Error("HGETALL")
	}
	if vs := must(c.HVals(ctx, "h"))(t); len(vs) != 4 || !bytes.Equal(vs[3], jsonDoc) {
		t.Error("HVALS")
	}
	r, _ := c.Do(ctx, "HGETALL", "h")
	if m, _ := r.AsMap(); len(m) != 4 {
		t.Error("Do HGETALL")
	} else if b, _ := m["m"].AsBytes(); !bytes.Equal(b, jsonDoc) {
		t.Error("Do HGETALL value not expanded")
	}
	if n, err := c.HStrLen(ctx, "h", "f"); err != nil || n != int64(len(jsonDoc)) {
		t.Errorf("HSTRLEN of a compressed field: %d %v, want the plaintext's length %d", n, err, len(jsonDoc))
	}

	other := append([]byte("other "), jsonDoc...)
	must(c.RPush(ctx, "l", jsonDoc, other))(t)
	must(c.LPush(ctx, "l", jsonDoc))(t)
	mustOK(t, c.LSet(ctx, "l", 0, other))
	must(c.LInsert(ctx, "l", true, other, jsonDoc))(t) // pivot matches: same settings
	if n := must(c.LLen(ctx, "l"))(t); n != 4 {
		t.Fatalf("LINSERT with a compressed pivot did not find it: len %d", n)
	}
	if v := must(c.LRange(ctx, "l", 0, -1))(t); !bytes.Equal(v[0], jsonDoc) || !bytes.Equal(v[1], other) {
		t.Errorf("LRANGE = %d values", len(v))
	}
	if v := must(c.LIndex(ctx, "l", -1))(t); !bytes.Equal(v, other) {
		t.Error("LINDEX")
	}
	if v := must(c.LMove(ctx, "l", "l2", Left, Right))(t); !bytes.Equal(v, jsonDoc) {
		t.Error("LMOVE")
	}
	if kv := must(c.BLPop(ctx, time.Second, "l2"))(t); !bytes.Equal(kv.Value, jsonDoc) {
		t.Error("BLPOP")
	}
	if n := must(c.LRem(ctx, "l", 0, other))(t); n != 2 {
		t.Errorf("LREM of a compressed element removed %d", n)
	}
	r, _ = c.Do(ctx, "RPOP", "l", 5)
	if vs, _ := r.AsSlice(); len(vs) != 1 {
		t.Errorf("RPOP count: %v", r)
	} else if b, _ := vs[0].AsBytes(); !bytes.Equal(b, jsonDoc) {
		t.Error("RPOP count value not expanded")
	}
	c.RPush(ctx, "l3", jsonDoc)
	r, _ = c.Do(ctx, "LMPOP", 1, "l3", "LEFT")
	if e, _ := r.AsSlice(); len(e) != 2 {
		t.Errorf("LMPOP %v", r)
	} else if vs, _ := e[1].AsSlice(); len(vs) != 1 {
		t.Errorf("LMPOP %v", r)
	} else if b, _ := vs[0].AsBytes(); !bytes.Equal(b, jsonDoc) {
		t.Error("LMPOP value not expanded")
	}
}

func TestCompressionSizeCapAndCorruptValues(t *testing.T) {
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, MaxDecompressedSize: 100}})
	ctx := context.Background()
	mustOK(t, c.Set(ctx, "big", jsonDoc)) // 300+ bytes: stored compressed
	if _, err := c.Get(ctx, "big"); !errors.Is(err, codec.ErrTooLarge) {
		t.Fatalf("over the cap: %v", err)
	}
	// Nothing is lost: a client with a larger cap reads it.
	c2, err := New(Options{Addr: c.s.opts.Addr, Compression: Compression{Backend: codec.LZ4}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got := must(c2.Get(ctx, "big"))(t); !bytes.Equal(got, jsonDoc) {
		t.Fatal("value lost")
	}
	// Corrupt payloads behind a valid-looking header come back as stored.
	for _, stored := range [][]byte{
		[]byte("\x00\x01\x02\x00\x01\xff\xff\xff\xff\xff\xff"),
		[]byte("\x00\x01\x02\x00\x02\x64\x00\x00\x00\xff\xff\xff"),
		[]byte("\x00\x01\x02\x00\x03garbage"),
	} {
		mustOK(t, c.Raw().Set(ctx, "bad", stored))
		if got := must(c2.Get(ctx, "bad"))(t); !bytes.Equal(got, stored) {
			t.Errorf("corrupt %x read as %x", stored, got)
		}
	}
	if _, err := New(Options{Addr: c.s.opts.Addr, Compression: Compression{Backend: codec.Zstd, Level: 23}}); err == nil {
		t.Fatal("level 23 accepted")
	}
	if _, err := New(Options{Addr: c.s.opts.Addr, Compression: Compression{Backend: codec.LZ4, MinSize: 5}}); err == nil {
		t.Fatal("MinSize 5 accepted")
	}
}

func TestCompressionAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.LZ4}})
	ctx := context.Background()
	mustOK(t, c.Set(ctx, "k", jsonDoc))
	if n := testing.AllocsPerRun(200, func() { c.Set(ctx, "k", jsonDoc) }); n > 0 {
		t.Errorf("compressed SET: %v allocations", n)
	}
	if n := testing.AllocsPerRun(200, func() { c.Get(ctx, "k") }); n > 2 {
		t.Errorf("compressed GET: %v allocations, want <= 2 (stored bytes, plaintext)", n)
	}
}

// With the PubSub family, published messages are compressed, and a
// subscriber on a plain connection expands them with DecodeValue.
func TestCompressionPubSub(t *testing.T) {
	c, srv := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, Families: PubSub}})
	ctx := context.Background()
	sub, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sub.SetDeadline(time.Now().Add(5 * time.Second))
	sub.Write([]byte("*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n"))
	rd := resp.NewReader(sub, 0, resp.Limits{})
	var v resp.Value
	if err := rd.ReadValue(&v); err != nil { // the subscription confirmation
		t.Fatal(err)
	}
	for _, send := range []func() error{
		func() error { _, err := c.Publish(ctx, "ch", jsonDoc); return err },
		func() error { _, err := c.Do(ctx, "PUBLISH", "ch", jsonDoc); return err },
	} {
		if err := send(); err != nil {
			t.Fatal(err)
		}
		if err := rd.ReadValue(&v); err != nil {
			t.Fatal(err)
		}
		payload := v.Elems()[2].Bytes()
		if !codec.IsCompressed(payload) || len(payload) >= len(jsonDoc) {
			t.Fatalf("message not compressed: %d bytes", len(payload))
		}
		got, err := c.DecodeValue(payload)
		if err != nil || !bytes.Equal(got, jsonDoc) {
			t.Fatalf("DecodeValue: %d bytes, %v", len(got), err)
		}
	}
	// Without the family, messages go out as they are.
	plain, err := New(Options{Addr: srv.Addr, Compression: Compression{Backend: codec.Zstd}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.Publish(ctx, "ch", jsonDoc)
	if err := rd.ReadValue(&v); err != nil || !bytes.Equal(v.Elems()[2].Bytes(), jsonDoc) {
		t.Fatalf("message without the PubSub family: %v %v", v, err)
	}
}
