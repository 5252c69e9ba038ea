package zipline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// Every command of the compression table, written and read through Do on a
// real server, Redis 7.0 and Valkey 9.1, in RESP3 and RESP2: what it writes
// is stored compressed, what it reads comes back as written; on a key in
// the compressed scope, commands that read stored bytes answer what the
// server answers on the plaintext, and those that write them, and
// scripts, are refused; on a key a Never rule keeps plain, they run.
// Adding a command to the table without a case here fails the test.
func TestCompressionEveryTableCommand(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		for _, proto := range []int{3, 2} {
			t.Run(fmt.Sprintf("%s/RESP%d", kind, proto), func(t *testing.T) {
				srv := testkit.NewServer(t, testkit.Config{Kind: kind})
				c, err := New(Options{Addr: srv.Addr, Protocol: proto, Logger: quiet,
					Compression: Compression{Backend: codec.Zstd, Families: Hashes | Lists | PubSub,
						Rules: []CompressionRule{{Pattern: "plain:*", Never: true}}}})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				covered := exerciseValueCommands(t, c)
				var missing []string
				for name := range valueCommandSpecs() {
					if !covered[name] {
						missing = append(missing, name)
					}
				}
				sort.Strings(missing)
				if len(missing) > 0 {
					t.Errorf("table commands with no case here: %s", strings.Join(missing, " "))
				}
			})
		}
	}
}

// exerciseValueCommands runs every table command, and returns those it
// covered (the server's unknown commands count, as skipped).
func exerciseValueCommands(t *testing.T, c *Client) map[string]bool {
	ctx := context.Background()
	doc := jsonDoc
	covered := map[string]bool{}
	unknown := func(err error) bool {
		var se *ServerError
		var ce *CommandError
		return errors.As(err, &se) && strings.Contains(se.Message, "unknown command") ||
			errors.As(err, &ce) && strings.Contains(ce.Reason, "is not on this server")
	}
	do := func(args ...any) (Value, bool) {
		t.Helper()
		name := strings.ToUpper(args[0].(string))
		covered[name] = true
		v, err := c.Do(ctx, args...)
		if unknown(err) {
			t.Logf("%s: not on this server", name)
			return v, false
		}
		if err != nil && !errors.Is(err, Nil) {
			t.Errorf("%s: %v", name, err)
			return v, false
		}
		return v, true
	}
	// stored checks the bytes the server holds: GLIDE-compressed, expanding
	// to doc.
	stored := func(name string, raw []byte, err error) {
		t.Helper()
		if err != nil || !codec.IsCompressed(raw) {
			t.Errorf("%s stored %d raw bytes (%v), want them compressed", name, len(raw), err)
		}
	}
	raw := c.Raw()
	rawHGet := func(key, field string) ([]byte, error) { return raw.HGet(ctx, key, field) }
	rawLIndex := func(key string, i int64) ([]byte, error) { return raw.LIndex(ctx, key, i) }
	// expanded checks that every value read is doc.
	expanded := func(name string, vs ...[]byte) {
		t.Helper()
		if len(vs) == 0 {
			t.Errorf("%s read no value", name)
		}
		for _, v := range vs {
			if !bytes.Equal(v, doc) {
				t.Errorf("%s read %d bytes, not the value written", name, len(v))
			}
		}
	}
	bs := func(v Value) []byte { b, _ := v.AsBytes(); return b }
	flat := func(v Value, from, step int) [][]byte {
		elems, _ := v.AsSlice()
		var out [][]byte
		for i := from; i < len(elems); i += step {
			out = append(out, bs(elems[i]))
		}
		return out
	}

	// Strings.
	for _, w := range [][]any{{"SET", "s", doc}, {"SETNX", "s2", doc}, {"SETEX", "s3", 100, doc},
		{"PSETEX", "s4", 100000, doc}, {"GETSET", "s5", doc}, {"MSET", "s6", doc, "s7", doc}, {"MSETNX", "s8", doc, "s9", doc}} {
		if _, ok := do(w...); ok {
			b, err := raw.Get(ctx, w[1].(string))
			stored(w[0].(string), b, err)
		}
	}
	if _, ok := do("MSETEX", 2, "s10", doc, "s11", doc, "EX", 100); ok { // Valkey 9.1
		for _, k := range []string{"s10", "s11"} {
			b, err := raw.Get(ctx, k)
			stored("MSETEX", b, err)
		}
	}
	for _, r := range [][]any{{"GET", "s"}, {"GETEX", "s", "EX", 100}, {"GETDEL", "s9"}, {"GETSET", "s5", doc}, {"SET", "s", doc, "GET"}} {
		if v, ok := do(r...); ok {
			expanded(r[0].(string), bs(v))
		}
	}
	if v, ok := do("MGET", "s", "s2"); ok {
		expanded("MGET", flat(v, 0, 1)...)
	}

	// Hashes.
	for _, w := range [][]any{{"HSET", "h", "a", doc, "b", doc}, {"HMSET", "h", "c", doc}, {"HSETNX", "h", "d", doc},
		{"HSETEX", "hx", "FIELDS", 2, "a", doc, "b", doc}} {
		if _, ok := do(w...); ok {
			for _, f := range []string{"a", "b", "c", "d"} {
				if w[0] == "HSETEX" && f > "b" || w[0] == "HSET" && f > "b" || w[0] == "HMSET" && f != "c" || w[0] == "HSETNX" && f != "d" {
					continue
				}
				b, err := rawHGet(w[1].(string), f)
				stored(w[0].(string), b, err)
			}
		}
	}
	if v, ok := do("HGET", "h", "a"); ok {
		expanded("HGET", bs(v))
	}
	if v, ok := do("HMGET", "h", "a", "b"); ok {
		expanded("HMGET", flat(v, 0, 1)...)
	}
	if v, ok := do("HVALS", "h"); ok {
		expanded("HVALS", flat(v, 0, 1)...)
	}
	if v, ok := do("HGETALL", "h"); ok {
		expanded("HGETALL", flat(v, 1, 2)...)
	}
	if v, ok := do("HRANDFIELD", "h", 2, "WITHVALUES"); ok {
		var vs [][]byte
		for _, e := range mustSlice(v) {
			if pair := mustSlice(e); len(pair) == 2 { // RESP3: [[field, value]...]
				vs = append(vs, bs(pair[1]))
			}
		}
		if vs == nil { // RESP2: field, value, field, value
			vs = flat(v, 1, 2)
		}
		expanded("HRANDFIELD WITHVALUES", vs...)
	}
	if v, ok := do("HSCAN", "h", 0); ok {
		page := mustSlice(v)
		expanded("HSCAN", flat(page[1], 1, 2)...)
	}
	// NOVALUES (Redis 7.4+, Valkey 8+): fields only, nothing to expand.
	if v, err := c.Do(ctx, "HSCAN", "h", 0, "NOVALUES"); err == nil {
		for _, f := range mustSlice(mustSlice(v)[1]) {
			if b := bs(f); len(b) != 1 {
				t.Errorf("HSCAN NOVALUES returned %d bytes for a field name", len(b))
			}
		}
	} else if !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("HSCAN NOVALUES: %v", err)
	}
	for fv, err := range c.HScan(ctx, "h", ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		expanded("HScan "+fv.Field, fv.Value)
	}
	if v, ok := do("HGETEX", "hx", "FIELDS", 1, "a"); ok {
		expanded("HGETEX", flat(v, 0, 1)...)
	}
	if v, ok := do("HGETDEL", "hx", "FIELDS", 1, "b"); ok {
		expanded("HGETDEL", flat(v, 0, 1)...)
	}

	// Lists.
	for _, w := range [][]any{{"RPUSH", "l", doc, doc}, {"LPUSH", "l", doc}, {"RPUSHX", "l", doc}, {"LPUSHX", "l", doc},
		{"LSET", "l", 0, doc}, {"LINSERT", "l", "BEFORE", doc, doc}} {
		if _, ok := do(w...); ok {
			b, err := rawLIndex("l", 0)
			stored(w[0].(string), b, err)
		}
	}
	if v, ok := do("LRANGE", "l", 0, -1); ok {
		expanded("LRANGE", flat(v, 0, 1)...)
	}
	if v, ok := do("LINDEX", "l", 1); ok {
		expanded("LINDEX", bs(v))
	}
	if v, ok := do("LPOP", "l"); ok {
		expanded("LPOP", bs(v))
	}
	if v, ok := do("RPOP", "l", 1); ok {
		expanded("RPOP count", flat(v, 0, 1)...)
	}
	if v, ok := do("LMOVE", "l", "l2", "LEFT", "RIGHT"); ok {
		expanded("LMOVE", bs(v))
	}
	if v, ok := do("RPOPLPUSH", "l", "l2"); ok {
		expanded("RPOPLPUSH", bs(v))
	}
	if v, ok := do("BLMOVE", "l2", "l", "LEFT", "LEFT", 1); ok {
		expanded("BLMOVE", bs(v))
	}
	if v, ok := do("BRPOPLPUSH", "l2", "l", 1); ok {
		expanded("BRPOPLPUSH", bs(v))
	}
	if v, ok := do("BLPOP", "l", 1); ok {
		expanded("BLPOP", flat(v, 1, 2)...)
	}
	if v, ok := do("BRPOP", "l", 1); ok {
		expanded("BRPOP", flat(v, 1, 2)...)
	}
	do("RPUSH", "l", doc, doc)
	if v, ok := do("LMPOP", 1, "l", "LEFT"); ok {
		expanded("LMPOP", flat(mustSlice(v)[1], 0, 1)...)
	}
	if v, ok := do("BLMPOP", 1, 1, "l", "LEFT"); ok {
		expanded("BLMPOP", flat(mustSlice(v)[1], 0, 1)...)
	}
	if n, _ := c.LLen(ctx, "l"); n != 0 {
		do("RPUSH", "l", doc) // LREM needs one to remove
	}
	do("RPUSH", "l", doc)
	if v, ok := do("LREM", "l", 0, doc); ok {
		if n, _ := v.AsInt64(); n == 0 {
			t.Error("LREM with a compressed element removed nothing")
		}
	}

	// Scripts and functions: refused on a key in the compressed scope, run
	// on one a rule keeps plain, where envelopes anywhere in the reply
	// (values the script read by other names) expand.
	const get = "return {redis.call('GET', ARGV[1]), {redis.call('GET', ARGV[1])}}"
	deep := func(name string, v Value) {
		t.Helper()
		elems := mustSlice(v)
		if len(elems) != 2 {
			t.Errorf("%s: reply %s", name, v.Kind())
			return
		}
		expanded(name, bs(elems[0]), bs(mustSlice(elems[1])[0]))
	}
	refusedScript := func(args ...any) {
		t.Helper()
		_, err := c.Do(ctx, args...)
		var ce *CommandError
		if !errors.As(err, &ce) || !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "Never: true") {
			t.Errorf("%s of a key in the compressed scope: %v, want a *CommandError naming the rule that fixes it", args[0], err)
		}
	}
	do("SET", "s", doc)
	sha := NewScript(get).SHA1()
	for _, name := range []string{"EVAL", "EVAL_RO", "EVALSHA", "EVALSHA_RO"} {
		body := get
		if strings.HasPrefix(name, "EVALSHA") {
			body = sha
		}
		refusedScript(name, body, 1, "s", "s")
		if v, ok := do(name, body, 1, "plain:script", "s"); ok {
			deep(name, v)
		}
	}
	lib := "#!lua name=ziptable\nredis.register_function{function_name='ztget', callback=function(keys, args) " +
		"return {redis.call('GET', args[1]), {redis.call('GET', args[1])}} end, flags={'no-writes'}}"
	if _, err := c.Do(ctx, "FUNCTION", "LOAD", "REPLACE", lib); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"FCALL", "FCALL_RO"} {
		refusedScript(name, "ztget", 1, "s", "s")
		if v, ok := do(name, "ztget", 1, "plain:script", "s"); ok {
			deep(name, v)
		}
	}
	do("DEL", "ids")
	do("RPUSH", "ids", 1)
	do("SET", "obj_1", doc)
	for _, name := range []string{"SORT", "SORT_RO"} {
		if v, ok := do(name, "ids", "BY", "nosort", "GET", "obj_*"); ok {
			expanded(name, flat(v, 0, 1)...)
		}
	}

	// Pub/sub: the message is published compressed.
	if _, ok := do("PUBLISH", "ch", doc); !ok {
		t.Error("PUBLISH")
	}
	if _, ok := do("SPUBLISH", "ch", doc); !ok {
		t.Error("SPUBLISH")
	}

	// Commands that read stored bytes answer, on the compressed "s", what
	// the server answers on the same plaintext stored plain.
	mustOK(t, raw.Set(ctx, "plain:s", doc))
	do("HSET", "h", "f", doc)
	if _, err := raw.HSet(ctx, "plain:h", FieldValue{Field: "f", Value: doc}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]any{
		{"STRLEN", "s"}, {"GETRANGE", "s", 3, 40}, {"SUBSTR", "s", -30, -2}, {"GETBIT", "s", 9},
		{"BITCOUNT", "s"}, {"BITCOUNT", "s", 1, -3}, {"BITPOS", "s", 0}, {"BITPOS", "s", 1, 2},
		{"HSTRLEN", "h", "f"},
	} {
		name := args[0].(string)
		got, ok := do(args...)
		plainArgs := append([]any{name}, args[1:]...)
		for i, a := range plainArgs {
			if a == "s" || a == "h" {
				plainArgs[i] = "plain:" + a.(string)
			}
		}
		want, err := c.Do(ctx, plainArgs...)
		if ok && (err != nil || got.String() != want.String()) {
			t.Errorf("%v on a compressed value: %s, want %s as on the plaintext (%v)", args, got, want, err)
		}
	}
	// Moves and copies: refused from the compressed scope into a key kept
	// plain; within a scope, or into the compressed one, they run.
	for _, name := range []string{"RENAME", "RENAMENX", "COPY"} {
		do("SET", "mv", doc)
		_, err := c.Do(ctx, name, "mv", "plain:mv")
		var ce *CommandError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "plain:mv") {
			t.Errorf("%s from the compressed scope to a plain key: %v, want a refusal", name, err)
		}
		do("DEL", "mv2")
		do(name, "mv", "mv2")
		mustOK(t, raw.Set(ctx, "plain:mv", []byte("x")))
		do("DEL", "mv3")
		do(name, "plain:mv", "mv3")
	}

	// Commands that write stored bytes are refused on "s", never sent, and
	// run on a key kept plain.
	writes := map[string][]any{
		"APPEND": {"APPEND", "s", "x"}, "SETRANGE": {"SETRANGE", "s", 0, "x"}, "SETBIT": {"SETBIT", "s", 0, 1},
		"BITFIELD": {"BITFIELD", "s", "GET", "u8", 0}, "BITFIELD_RO": {"BITFIELD_RO", "s", "GET", "u8", 0},
		"BITOP": {"BITOP", "AND", "plain:d", "s"}, "DELIFEQ": {"DELIFEQ", "s", "x"}, "LPOS": {"LPOS", "l", "x"},
		"LCS": {"LCS", "s", "plain:s"},
	}
	for name, spec := range valueCommandSpecs() {
		if !spec.value.refuse {
			continue
		}
		covered[name] = true
		args, ok := writes[name]
		if !ok {
			t.Errorf("%s: no case for a command that writes stored bytes", name)
			continue
		}
		_, err := c.Do(ctx, args...)
		var ce *CommandError
		if unknown(err) {
			continue
		}
		if !errors.As(err, &ce) || !errors.Is(err, ErrNotSent) {
			t.Errorf("%v with compression on: %v, want a *CommandError", args, err)
		}
		plainArgs := append([]any(nil), args...)
		for i, a := range plainArgs {
			if a == "s" || a == "l" {
				plainArgs[i] = "plain:w"
			}
		}
		if _, err := c.Do(ctx, plainArgs...); errors.As(err, &ce) {
			t.Errorf("%v on a key kept plain: %v", plainArgs, err)
		}
	}
	return covered
}

func mustSlice(v Value) []Value { s, _ := v.AsSlice(); return s }

// valueCommandSpecs are the rows whose overlay says where stored values
// are, by name.
func valueCommandSpecs() map[string]*commandSpec {
	out := map[string]*commandSpec{}
	for name, spec := range commandSpecs {
		if spec.value.family != familyNone {
			out[name] = spec
		}
	}
	return out
}
