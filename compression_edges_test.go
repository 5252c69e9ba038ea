package zipline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
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

// Option words count only where options stand: a key, a MATCH pattern or a
// field that spells NOVALUES, WITHVALUES or FIELDS is data. HSCAN of a key
// named "novalues" used to return the stored envelopes, and HSETEX on a key
// named "FIELDS" compressed a field name.
func TestCompressionOptionWordsOnlyWhereOptionsStand(t *testing.T) {
	ctx := context.Background()
	comp := Compression{Backend: codec.Zstd, MinSize: 6, Families: Hashes}
	c, _ := newTestClient(t, Options{Compression: comp})
	val := []byte(strings.Repeat("compressible ", 20))
	for _, key := range []string{"novalues", "h"} {
		must(c.HSet(ctx, key, FieldValue{"novalues", val}))(t)
		for _, match := range []string{"*", "novalues"} {
			for fv, err := range c.HScan(ctx, key, ScanOptions{Match: match}) {
				if err != nil {
					t.Fatal(err)
				}
				if string(fv.Value) != string(val) {
					t.Errorf("HSCAN %s MATCH %s: value %.20q..., want it expanded", key, match, fv.Value)
				}
			}
			v, err := c.Do(ctx, "HSCAN", key, 0, "MATCH", match)
			if err != nil {
				t.Fatal(err)
			}
			page := mustSlice(v)
			items := mustSlice(page[1])
			if b, _ := items[1].AsBytes(); string(b) != string(val) {
				t.Errorf("Do HSCAN %s MATCH %s: value not expanded", key, match)
			}
		}
		// NOVALUES where it stands still means no values (Redis 7.4+/Valkey 8+
		// only: the server refuses it otherwise, and that is fine too).
		if v, err := c.Do(ctx, "HSCAN", key, 0, "NOVALUES"); err == nil {
			if items := mustSlice(mustSlice(v)[1]); len(items) != 1 {
				t.Errorf("HSCAN NOVALUES gave %d items", len(items))
			}
		}
	}
	// HRANDFIELD on a key named like the option returns field names only.
	fields := must(c.Do(ctx, "HRANDFIELD", "novalues", 1))(t)
	if names := mustSlice(fields); len(names) != 1 {
		t.Errorf("HRANDFIELD count 1: %v", fields)
	}
	withValues := must(c.Do(ctx, "HRANDFIELD", "novalues", 1, "WITHVALUES"))(t)
	if !strings.Contains(withValues.String(), "compressible") {
		t.Errorf("HRANDFIELD WITHVALUES not expanded: %.60s", withValues)
	}
}

// HSETEX (Valkey 9) compresses its values, and only its values, whatever
// its key and fields are called. (Valkey itself refuses a key named FIELDS.)
func TestCompressionHSetEXOnAKeyNamedFields(t *testing.T) {
	ctx := context.Background()
	srv := testkit.NewServer(t, testkit.Config{Kind: testkit.Valkey})
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Compression: Compression{Backend: codec.Zstd, MinSize: 6, Families: Hashes}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	val := strings.Repeat("compressible ", 20)
	const field = "FIELDS"
	for _, key := range []string{"EX", "h"} {
		if _, err := c.Do(ctx, "HSETEX", key, "EX", 100, "FIELDS", 1, field, val); err != nil {
			t.Fatal(err)
		}
		names, err := c.Raw().HKeys(ctx, key)
		if err != nil || len(names) != 1 || names[0] != field {
			t.Fatalf("HSETEX %s stored field names %q, %v", key, names, err)
		}
		raw := must(c.Raw().HGet(ctx, key, field))(t)
		if !codec.IsCompressed(raw) {
			t.Errorf("HSETEX %s: value stored uncompressed", key)
		}
		if got := must(c.HGet(ctx, key, field))(t); string(got) != val {
			t.Errorf("HSETEX %s: read %.20q", key, got)
		}
	}
}

// XREAD and XREADGROUP block only with a BLOCK option: a group, consumer
// or stream named BLOCK does not send the command to a dedicated connection
// with a timeout read from the wrong argument.
func TestXReadBlockOptionOnlyWhereOptionsStand(t *testing.T) {
	words := func(ws ...string) []arg {
		out := make([]arg, len(ws))
		for i, w := range ws {
			out[i] = str(w)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		args  []arg
		block bool
		wait  time.Duration
	}{
		{"XREAD", words("BLOCK", "1500", "STREAMS", "s", "0"), true, 1500 * time.Millisecond},
		{"XREAD", words("COUNT", "BLOCK", "STREAMS", "s", "0"), false, 0},
		{"XREAD", words("STREAMS", "BLOCK", "0"), false, 0},
		{"XREADGROUP", words("GROUP", "BLOCK", "c", "STREAMS", "s", ">"), false, 0},
		{"XREADGROUP", words("GROUP", "g", "BLOCK", "COUNT", "1", "BLOCK", "20", "STREAMS", "s", ">"), true, 20 * time.Millisecond},
	} {
		spec := commandSpecs[tc.name]
		if got := spec.classFor(tc.args) == classBlocking; got != tc.block {
			t.Errorf("%s %v: blocking %v, want %v", tc.name, tc.args, got, tc.block)
		}
		if got := spec.block.timeout(tc.args); got != tc.wait {
			t.Errorf("%s %v: timeout %v, want %v", tc.name, tc.args, got, tc.wait)
		}
	}
}

// What scripts, functions and SORT ... GET return holds stored values read
// inside the server: every valid envelope in such a reply is expanded, at
// any depth, on every path (Do, Script.Run, a Batch, a Tx). The scripts
// here are given a key a rule keeps plain (a script given a key in the
// compressed scope is refused: TestScriptOutcomeIndependentOfValueSize),
// and read the compressed value by the name ARGV[1] gives.
func TestCompressionExpandsScriptAndSortReplies(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, MinSize: 6,
		Rules: []CompressionRule{{Pattern: "{k}plain*", Never: true}}}})
	val := strings.Repeat(`{"a":"compressible"}`, 10)
	mustOK(t, c.Set(ctx, "{k}1", []byte(val)))
	if !compressed(t, c, "{k}1") {
		t.Fatal("value not stored compressed")
	}
	wantDeep := func(what string, v Value, err error, n int) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := strings.Count(v.String(), "compressible"); got != 10*n {
			t.Errorf("%s = %.80s: %d expanded values, want %d", what, v, got/10, n)
		}
	}
	const get = "return redis.call('GET', ARGV[1])"
	const nested = "local v = redis.call('GET', ARGV[1]); return {v, {v, 7}, 'x'}"
	v, err := c.Do(ctx, "EVAL", get, 1, "{k}plain", "{k}1")
	wantDeep("EVAL", v, err, 1)
	v, err = c.Do(ctx, "EVAL", nested, 1, "{k}plain", "{k}1")
	wantDeep("EVAL nested", v, err, 2)
	v, err = c.Do(ctx, "EVAL_RO", get, 1, "{k}plain", "{k}1")
	wantDeep("EVAL_RO", v, err, 1)
	s := NewScript(nested)
	v, err = s.Run(ctx, c, []string{"{k}plain"}, "{k}1") // EVAL after NOSCRIPT
	wantDeep("Script.Run first", v, err, 2)
	v, err = s.Run(ctx, c, []string{"{k}plain"}, "{k}1") // EVALSHA
	wantDeep("Script.Run", v, err, 2)
	v, err = c.Do(ctx, "EVALSHA_RO", s.SHA1(), 1, "{k}plain", "{k}1")
	wantDeep("EVALSHA_RO", v, err, 2)
	for _, b := range []*Batch{c.Batch(), c.Tx()} {
		f := s.Queue(b, []string{"{k}plain"}, "{k}1")
		g := b.Do("EVAL", get, 1, "{k}plain", "{k}1")
		mustOK(t, b.Exec(ctx))
		v, err := f.Result()
		wantDeep("Script.Queue", v, err, 2)
		v, err = g.Result()
		wantDeep("Batch EVAL", v, err, 1)
	}
	lib := "#!lua name=ziplib\nredis.register_function{function_name='zget', callback=function(keys, args) return redis.call('GET', args[1]) end, flags={'no-writes'}}"
	if _, err := c.Do(ctx, "FUNCTION", "LOAD", "REPLACE", lib); err != nil {
		t.Fatal(err)
	}
	v, err = c.Do(ctx, "FCALL", "zget", 1, "{k}plain", "{k}1")
	wantDeep("FCALL", v, err, 1)
	v, err = c.Do(ctx, "FCALL_RO", "zget", 1, "{k}plain", "{k}1")
	wantDeep("FCALL_RO", v, err, 1)

	// SORT ... GET reads stored values.
	must(c.RPush(ctx, "{k}list", []byte("1"), []byte("2")))(t)
	mustOK(t, c.Set(ctx, "{k}obj_1", []byte(val)))
	mustOK(t, c.Set(ctx, "{k}obj_2", []byte(val)))
	v, err = c.Do(ctx, "SORT", "{k}list", "GET", "{k}obj_*")
	wantDeep("SORT GET", v, err, 2)
	v, err = c.Do(ctx, "SORT_RO", "{k}list", "BY", "nosort", "GET", "#", "GET", "{k}obj_*")
	wantDeep("SORT_RO BY nosort GET", v, err, 2)
	// BY weights that may be compressed: refused, ALPHA or not. A
	// compressed weight sorts as 0 numerically (the server reads its NUL
	// first byte as an empty number), where the server would refuse the
	// plaintext; with ALPHA it compares compressed bytes.
	var ce *CommandError
	for _, args := range [][]any{{"SORT", "{k}list", "BY", "{k}obj_*"}, {"SORT", "{k}list", "BY", "{k}obj_*", "ALPHA"},
		{"SORT_RO", "{k}list", "BY", "{k}w_*", "LIMIT", 0, 1}} {
		if _, err := c.Do(ctx, args...); !errors.As(err, &ce) {
			t.Errorf("%v: %v, want a CommandError", args, err)
		}
	}
	// The elements themselves are fine to sort when lists are stored raw.
	v, err = c.Do(ctx, "SORT", "{k}list", "ALPHA", "LIMIT", 0, 1)
	if err != nil || v.String() != `["1"]` {
		t.Errorf("SORT ALPHA = %v, %v", v, err)
	}
	if v, err = c.Do(ctx, "SORT", "{k}list", "DESC"); err != nil || v.String() != `["2" "1"]` {
		t.Errorf("SORT DESC = %v, %v", v, err)
	}
	// A key named BY is not the option.
	must(c.RPush(ctx, "BY", []byte("2"), []byte("1")))(t)
	if _, err := c.Do(ctx, "SORT", "BY"); err != nil {
		t.Errorf("SORT of a key named BY: %v", err)
	}
	// With lists compressed, sorting list elements is refused too.
	cl, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, MinSize: 6, Families: Lists}})
	if _, err := cl.Do(ctx, "SORT", "{k}list"); !errors.As(err, &ce) {
		t.Errorf("SORT of a list, lists compressed: %v, want a CommandError", err)
	}

	// SORT ... GET ... STORE copies stored values into a list, which keeps
	// them compressed: refused unless lists are compressed too, whose reads
	// expand them (found by the differential test: LRANGE returned the
	// envelope). GET # stores the elements themselves: fine.
	for _, typed := range []bool{false, true} {
		var err error
		if typed {
			_, err = c.SortStore(ctx, "{k}list", "{k}dst", SortArgs{Get: []string{"{k}obj_*"}})
		} else {
			_, err = c.Do(ctx, "SORT", "{k}list", "BY", "nosort", "GET", "{k}obj_*", "STORE", "{k}dst")
		}
		if !errors.As(err, &ce) {
			t.Errorf("SORT GET pattern STORE (typed %v), lists not compressed: %v, want a CommandError", typed, err)
		}
	}
	if _, err := c.Do(ctx, "SORT", "{k}list", "GET", "#", "STORE", "{k}dst"); err != nil {
		t.Errorf("SORT GET # STORE: %v", err)
	}
	cs, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, MinSize: 6, Families: Lists}})
	must(cs.RPush(ctx, "{k}ids", []byte("1")))(t)
	mustOK(t, cs.Set(ctx, "{k}obj_1", []byte(val)))
	if n, err := cs.Do(ctx, "SORT", "{k}ids", "BY", "nosort", "GET", "{k}obj_*", "STORE", "{k}dst"); err != nil {
		t.Fatalf("SORT GET STORE, lists compressed: %v %v", n, err)
	}
	if got, err := cs.LRange(ctx, "{k}dst", 0, -1); err != nil || len(got) != 1 || string(got[0]) != val {
		t.Errorf("the stored list reads %q, %v; want the value expanded", got, err)
	}
}
