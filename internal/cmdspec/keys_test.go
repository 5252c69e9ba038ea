package cmdspec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// commandLines exercise every kind of key spec: fixed positions, ranges to
// the end, steps, numkeys (at several places), keywords searched forwards
// and backwards, 1/limit of the rest (XREAD), and container subcommands.
var commandLines = []string{
	"GET k", "SET k v EX 10", "MGET a b c", "MSET a 1 b 2 c 3", "DEL a b", "EXISTS a", "RENAME a b",
	"SINTERCARD 2 a b", "SINTERCARD 3 a b c LIMIT 5", "ZINTERCARD 2 z1 z2", "ZUNION 2 z1 z2 WITHSCORES",
	"ZINTER 3 z1 z2 z3", "ZDIFF 2 z1 z2", "ZUNIONSTORE dst 2 z1 z2 WEIGHTS 1 2", "ZDIFFSTORE dst 2 z1 z2",
	"LMPOP 2 l1 l2 LEFT", "LMPOP 1 l1 RIGHT COUNT 3", "BLMPOP 0.5 2 l1 l2 LEFT", "ZMPOP 2 z1 z2 MIN",
	"BZMPOP 1 1 z1 MAX", "XREAD COUNT 2 STREAMS s1 s2 0 0", "XREAD STREAMS s1 $", "XREAD BLOCK 10 STREAMS a b c 0 0 0",
	"XREADGROUP GROUP g c COUNT 1 STREAMS s1 >", "XREADGROUP GROUP g c STREAMS s1 s2 > >",
	"OBJECT ENCODING k", "OBJECT FREQ k", "OBJECT IDLETIME k", "MEMORY USAGE k", "MEMORY USAGE k SAMPLES 5",
	"XINFO STREAM s", "XINFO GROUPS s", "XGROUP CREATE s g $", "CONFIG GET maxmemory",
	"EVAL script 2 k1 k2 a1", "EVAL script 0 a1", "EVALSHA abc 1 k1", "FCALL f 2 k1 k2 a", "FCALL_RO f 0",
	"SORT k BY w_* GET # STORE dst", "SORT_RO k", "GEORADIUS g 1 2 3 m STORE dst", "GEOSEARCHSTORE dst src FROMMEMBER m BYRADIUS 1 m",
	"MIGRATE 127.0.0.1 6379 \"\" 0 5000 KEYS a b c", "MIGRATE 127.0.0.1 6379 k 0 5000",
	"MIGRATE h 1 \"\" 0 5 COPY AUTH KEYS KEYS a", "MIGRATE h 1 \"\" 0 5 AUTH2 u KEYS KEYS b", "SORT k LIMIT 0 1 STORE d1 STORE d2",
	"SORT k GET STORE BY STORE", "SORT k STORE",
	"BLPOP a b 0", "BRPOPLPUSH a b 0", "LMOVE a b LEFT RIGHT", "SMOVE a b m", "COPY a b", "BITOP AND dst a b",
	"PFCOUNT a b", "PFMERGE dst a b", "RPOPLPUSH a b", "SINTERSTORE dst a b", "WATCH a b", "TOUCH a b",
	"HSET h f v f2 v2", "ZADD z 1 m", "GETEX k PERSIST", "LCS a b", "SUNION a b c",
	"PING", "TIME", "INFO", "CLIENT ID", "PUBLISH ch m", "SPUBLISH ch m",
	// Too few arguments, or a numkeys that does not parse: no keys, as the server finds none.
	"SINTERCARD x a", "SINTERCARD 3 a", "ZUNION 0", "XREAD COUNT 1", "EVAL s -1 k",
}

func TestKeysMatchTheServer(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/RESP%d", kind, proto), func(t *testing.T) {
				srv := testkit.NewServer(t, testkit.Config{Kind: kind})
				tab := loadTable(t, srv, proto)
				if len(tab) < 200 {
					t.Fatalf("%d commands parsed, want the server's ~240", len(tab))
				}
				if tab["OBJECT"] == nil || tab["OBJECT"].Subcommands["ENCODING"] == nil {
					t.Fatal("OBJECT ENCODING missing from the table")
				}
				for _, line := range commandLines {
					words := strings.Fields(line)
					for i, w := range words {
						if w == `""` {
							words[i] = ""
						}
					}
					name, rest := strings.ToUpper(words[0]), words[1:]
					args := Strings(rest)
					var got []string
					if c := tab.Lookup(name, args); c != nil {
						for _, p := range c.AppendKeys(nil, args) {
							got = append(got, rest[p])
						}
					}
					want := serverKeys(t, srv, words)
					if name == "SPUBLISH" { // a channel: not a key, but routed like one
						want = append(want, words[1])
					}
					slices.Sort(got)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Errorf("%s: keys %q, the server says %q", line, got, want)
					}
				}
			})
		}
	}
}

func loadTable(t *testing.T, srv *testkit.Server, proto int) Table {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := Ask(ctx, srv.Addr, proto, "COMMAND")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// serverKeys asks the server which arguments of words are keys (COMMAND
// GETKEYS); an error (no keys, or arguments it cannot read) is none.
func serverKeys(t *testing.T, srv *testkit.Server, words []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	args := []any{"COMMAND", "GETKEYS"}
	for _, w := range words {
		args = append(args, w)
	}
	v, err := srv.Do(ctx, args...)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range v.Elems() {
		out = append(out, string(e.Bytes()))
	}
	return out
}
