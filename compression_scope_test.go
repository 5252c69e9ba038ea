package zipline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// A script that decodes a stored JSON value has the same outcome for a
// short session (stored plain, under the minimum size) and a long one
// (stored compressed): refused before sending while its key is in the
// compressed scope, and run, with every value stored plain, once a rule
// keeps the pattern plain. Before the rules, the short one decoded and the
// long one failed in the server with "JSON parser does not support UTF-16
// or UTF-32".
func TestScriptOutcomeIndependentOfValueSize(t *testing.T) {
	ctx := context.Background()
	short := []byte(`{"user":7,"role":"reader","exp":1767000000}`)
	long := []byte(`{"user":8,"role":"editor","exp":1767000000,"scopes":["read","write","admin","billing"],` +
		`"agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"}`)
	const decode = "local s = cjson.decode(redis.call('GET', KEYS[1])); return s.user"
	lib := "#!lua name=sessions\nredis.register_function{function_name='session_user', callback=function(keys) " +
		"return cjson.decode(redis.call('GET', keys[1])).user end, flags={'no-writes'}}"
	for _, tc := range []struct {
		name  string
		rules []CompressionRule
		runs  bool
	}{
		{"compressed scope", nil, false},
		{"kept plain", []CompressionRule{{Pattern: "session:*", Never: true}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, Rules: tc.rules}})
			if _, err := c.Raw().Do(ctx, "FUNCTION", "LOAD", "REPLACE", lib); err != nil {
				t.Fatal(err)
			}
			mustOK(t, c.Set(ctx, "session:short", short))
			mustOK(t, c.Set(ctx, "session:long", long))
			if raw := must(c.Raw().Get(ctx, "session:long"))(t); codec.IsCompressed(raw) == tc.runs {
				t.Fatalf("the long session stored compressed: %v, rules %v", codec.IsCompressed(raw), tc.rules)
			}
			script := NewScript(decode)
			for _, key := range []string{"session:short", "session:long"} {
				outcomes := map[string]func() (Value, error){
					"Eval":       func() (Value, error) { return c.Eval(ctx, decode, []string{key}) },
					"EvalRO":     func() (Value, error) { return c.EvalRO(ctx, decode, []string{key}) },
					"Script.Run": func() (Value, error) { return script.Run(ctx, c, []string{key}) },
					"FCall":      func() (Value, error) { return c.FCall(ctx, "session_user", []string{key}) },
					"Do EVAL":    func() (Value, error) { return c.Do(ctx, "EVAL", decode, 1, key) },
				}
				for how, run := range outcomes {
					v, err := run()
					var ce *CommandError
					switch {
					case tc.runs && err != nil:
						t.Errorf("%s of %s with the pattern kept plain: %v", how, key, err)
					case tc.runs:
						if n, _ := v.AsInt64(); n != 7 && n != 8 {
							t.Errorf("%s of %s = %v", how, key, v)
						}
					case !errors.As(err, &ce) || !errors.Is(err, ErrNotSent) ||
						!strings.Contains(err.Error(), `{Pattern: "session:*", Never: true}`):
						t.Errorf("%s of %s in the compressed scope: %v, want a refusal naming the rule", how, key, err)
					}
				}
			}
		})
	}
}

// With compression on and no rules, STRLEN of a plain counter answers its
// length (it was refused on every key before), and so do the other reads
// of stored bytes, on plain and compressed values alike.
func TestStrlenOfAPlainCounter(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd}})
	must(c.IncrBy(ctx, "visits", 43))(t)
	if n, err := c.StrLen(ctx, "visits"); err != nil || n != 2 {
		t.Fatalf("STRLEN of the counter 43 = %d, %v; want 2", n, err)
	}
	if n, err := c.StrLen(ctx, "missing"); err != nil || n != 0 {
		t.Fatalf("STRLEN of a missing key = %d, %v; want 0", n, err)
	}
	must(c.LPush(ctx, "list", []byte("x")))(t)
	var se *ServerError
	if _, err := c.StrLen(ctx, "list"); !errors.As(err, &se) || se.Prefix != "WRONGTYPE" {
		t.Fatalf("STRLEN of a list: %v, want WRONGTYPE as the server gives it", err)
	}
}

// Rules on one Client: a pattern kept plain, a pattern with its own
// backend and minimum size, the rest compressed as the Compression says;
// every value reads back as written, and the commands that write stored
// bytes run on the plain pattern only.
func TestRulesKeepAPatternPlain(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd, Families: PubSub, Rules: []CompressionRule{
		{Pattern: "plain:*", Never: true},
		{Pattern: "fast:[0-9]*", Backend: codec.LZ4, MinSize: 200},
	}}})
	doc := jsonDoc
	mustOK(t, c.MSet(ctx, KeyValue{"plain:1", doc}, KeyValue{"fast:1", doc}, KeyValue{"fast:x", doc}, KeyValue{"other", doc}))
	mustOK(t, c.Set(ctx, "fast:2", doc[:150])) // under the rule's minimum size
	wantBackend := map[string]byte{"plain:1": 0, "fast:1": byte(codec.LZ4), "fast:x": byte(codec.Zstd),
		"other": byte(codec.Zstd), "fast:2": 0}
	for key, backend := range wantBackend {
		raw := must(c.Raw().Get(ctx, key))(t)
		got := byte(0)
		if codec.IsCompressed(raw) {
			got = raw[4]
		}
		if got != backend {
			t.Errorf("%s stored with backend %d, want %d (0: plain)", key, got, backend)
		}
		v := must(c.Get(ctx, key))(t)
		if !bytes.HasPrefix(doc, v) || len(v) < 150 {
			t.Errorf("%s read back %d bytes", key, len(v))
		}
	}
	if n, err := c.Append(ctx, "plain:1", []byte("!")); err != nil || n != int64(len(doc)+1) {
		t.Errorf("APPEND on a plain key: %d %v", n, err)
	}
	if _, err := c.Append(ctx, "other", []byte("!")); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("APPEND on a compressed key: %v, want a refusal", err)
	}
	if _, err := c.Do(ctx, "BITOP", "OR", "plain:dst", "plain:1", "other"); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("BITOP reading a key in the compressed scope: %v, want a refusal", err)
	}
	if _, err := c.Do(ctx, "BITOP", "OR", "plain:dst", "plain:1"); err != nil {
		t.Errorf("BITOP of plain keys: %v", err)
	}
	// The same rules through Do, on a server with no key marks.
	if _, err := c.Do(ctx, "SET", "plain:2", doc); err != nil {
		t.Fatal(err)
	}
	if raw := must(c.Raw().Get(ctx, "plain:2"))(t); codec.IsCompressed(raw) {
		t.Error("Do SET of a plain key stored it compressed")
	}
	// PUBLISH: the channel is matched.
	sub, err := c.Raw().Subscribe(ctx, "plain:news", "news")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	must(c.Publish(ctx, "plain:news", doc))(t)
	must(c.Publish(ctx, "news", doc))(t)
	seen := map[string]bool{}
	for msg, err := range sub.Messages(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		seen[msg.Channel] = codec.IsCompressed(msg.Payload)
		if len(seen) == 2 {
			break
		}
	}
	if seen["plain:news"] || !seen["news"] {
		t.Errorf("compressed by channel: %v, want news only", seen)
	}
}

// Bad rules are refused by New, with the rule's index.
func TestRulesRefusedByNew(t *testing.T) {
	for _, cfg := range []Compression{
		{Backend: codec.Zstd, Rules: []CompressionRule{{Pattern: "a[b"}}},
		{Backend: codec.Zstd, Rules: []CompressionRule{{Pattern: `a\`}}},
		{Backend: codec.Zstd, Rules: []CompressionRule{{Pattern: "a*", Never: true, Backend: codec.LZ4}}},
		{Rules: []CompressionRule{{Pattern: "a*", Never: true}}},
		{WritePlain: true},
	} {
		if _, err := New(Options{Addr: "127.0.0.1:1", LazyConnect: true, Compression: cfg}); err == nil ||
			!strings.Contains(err.Error(), "Compression") {
			t.Errorf("%+v: %v, want an error naming the option", cfg, err)
		}
	}
}

// The reads of stored bytes answered on the plaintext give what the server
// gives on the same plaintext stored plain, for random values and
// arguments, ranges in bytes and bits, negative and out of range,
// missing keys and empty strings included, on Redis 7.0 and Valkey 9.1.
func TestPlainReadsMatchTheServer(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			srv := testkit.NewServer(t, testkit.Config{Kind: kind})
			c, err := New(Options{Addr: srv.Addr, Logger: quiet, Compression: Compression{Backend: codec.Zstd, MinSize: 6,
				Rules: []CompressionRule{{Pattern: "plain:*", Never: true}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rng := rand.New(rand.NewPCG(11, uint64(len(kind))))
			value := func() []byte {
				n := []int{0, 1, 2, 7, 30, 200}[rng.IntN(6)]
				b := make([]byte, n)
				for i := range b {
					b[i] = []byte{0x00, 0xff, 'a', 'b', 'c', 0x0f, 0xf0, byte(rng.IntN(256))}[rng.IntN(8)]
				}
				if n > 20 && rng.IntN(2) == 0 { // compressible
					b = bytes.Repeat(b[:7], n/7)
				}
				return b
			}
			num := func() int64 { return []int64{0, 1, 2, 3, 5, 17, 100, 1000, -1, -2, -3, -7, -100, -1000}[rng.IntN(14)] }
			compared := 0
			for round := range 300 {
				a, b := value(), value()
				keys := map[string][]byte{"a": a, "b": b}
				for k, v := range keys {
					if rng.IntN(10) == 0 {
						c.Del(ctx, "{r}"+k, "plain:{r}"+k)
						continue
					}
					mustOK(t, c.Set(ctx, "{r}"+k, v))
					mustOK(t, c.Set(ctx, "plain:{r}"+k, v))
				}
				var cmds [][]any
				cmds = append(cmds, []any{"STRLEN", "a"}, []any{"GETRANGE", "a", num(), num()}, []any{"SUBSTR", "a", num(), num()},
					[]any{"GETBIT", "a", rng.Int64N(2000)}, []any{"BITCOUNT", "a"}, []any{"BITCOUNT", "a", num(), num()},
					[]any{"BITCOUNT", "a", num(), num(), "BIT"}, []any{"BITCOUNT", "a", num(), num(), "BYTE"},
					[]any{"BITPOS", "a", rng.IntN(2)}, []any{"BITPOS", "a", rng.IntN(2), num()},
					[]any{"BITPOS", "a", rng.IntN(2), num(), num()}, []any{"BITPOS", "a", rng.IntN(2), num(), num(), "BIT"},
					[]any{"BITPOS", "a", rng.IntN(2), num(), num(), "BYTE"})
				for _, cmd := range cmds {
					scoped, plain := slices.Clone(cmd), slices.Clone(cmd)
					for i, x := range cmd {
						if x == "a" || x == "b" {
							scoped[i], plain[i] = "{r}"+x.(string), "plain:{r}"+x.(string)
						}
					}
					got, gerr := c.Do(ctx, scoped...)
					want, werr := c.Do(ctx, plain...)
					if fmt.Sprint(got, gerr != nil) != fmt.Sprint(want, werr != nil) {
						t.Errorf("round %d: %v on %d and %d bytes: %v (%v), the server on the plaintext %v (%v)",
							round, cmd, len(a), len(b), got, gerr, want, werr)
					}
					compared++
				}
				if t.Failed() {
					return
				}
			}
			t.Logf("%d commands compared", compared)
		})
	}
}

// Patterns match keys as the server's KEYS matches them.
func TestGlobMatchesTheServer(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, Options{})
	rng := rand.New(rand.NewPCG(5, 5))
	keys := map[string]bool{}
	for range 150 {
		n := rng.IntN(6)
		var b strings.Builder
		for range n {
			b.WriteByte("ab:c1-"[rng.IntN(6)])
		}
		keys[b.String()] = true
	}
	var kvs []KeyValue
	for k := range keys {
		if k != "" {
			kvs = append(kvs, KeyValue{k, []byte("1")})
		}
	}
	mustOK(t, c.MSet(ctx, kvs...))
	pieces := []string{"a", "b", ":", "*", "?", "[ab]", "[^a]", "[a-c]", "[c-a]", `\*`, `\a`, "c", "1", "-", "[:]"}
	for range 400 {
		var p strings.Builder
		for range 1 + rng.IntN(5) {
			p.WriteString(pieces[rng.IntN(len(pieces))])
		}
		pattern := p.String()
		g, err := compileGlob(pattern)
		if err != nil {
			t.Fatalf("%q: %v", pattern, err)
		}
		want := must(c.Keys(ctx, pattern))(t)
		var got []string
		for _, kv := range kvs {
			if g.match(kv.Key) {
				got = append(got, kv.Key)
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q matches %q, the server's KEYS %q", pattern, got, want)
		}
	}
}
