package difftest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed"
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

var (
	flagSeed     = flag.String("difftest.seed", envOr("DIFFTEST_SEED", "1"), "seed of the command sequence; 0 or \"random\" picks one")
	flagN        = flag.Int("difftest.n", envInt("DIFFTEST_N", 4000), "commands per mode")
	flagProto    = flag.String("difftest.proto", envOr("DIFFTEST_PROTO", "all"), "protocol: 2, 3 or all")
	flagComp     = flag.String("difftest.comp", envOr("DIFFTEST_COMP", "all"), "zipline compression: off, zstd, lz4 (comma-separated) or all")
	flagFamilies = flag.String("difftest.families", envOr("DIFFTEST_FAMILIES", "mode"), "compressed families beyond strings: mode (each mode's own), none or hashes+lists")
	flagMinSize  = flag.Int("difftest.minsize", envInt("DIFFTEST_MINSIZE", 0), "Compression.MinSize; 0 picks 6..16 from the seed")
	flagKind     = flag.String("difftest.kind", envOr("DIFFTEST_KIND", "all"), "server: redis, valkey or all (those installed)")
	flagMaxFail  = flag.Int("difftest.maxfail", envInt("DIFFTEST_MAXFAIL", 100), "stop a mode after this many differences")
	flagTrace    = flag.Bool("difftest.trace", false, "log every command and both replies")
)

// seed returns the run's seed, picking one if asked.
func seed(t *testing.T) uint64 {
	s := strings.TrimSpace(*flagSeed)
	if s == "" || s == "0" || s == "random" {
		return uint64(time.Now().UnixNano())
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("-difftest.seed %q: %v", s, err)
	}
	return n
}

// mode is one configuration of the zipline side: protocol and compression.
type mode struct {
	proto    int
	comp     string // off, zstd, lz4
	families zipline.Families
	minSize  int
}

func (m mode) String() string {
	s := fmt.Sprintf("resp%d-%s", m.proto, m.comp)
	if m.comp != "off" {
		if m.families&(zipline.Hashes|zipline.Lists) == zipline.Hashes|zipline.Lists {
			s += "-hashes+lists"
		}
		s += fmt.Sprintf("-min%d", m.minSize)
	}
	return s
}

// compressed reports whether zipline compresses family f in this mode.
func (m mode) compressed(f family) bool {
	switch {
	case m.comp == "off" || f == famNone:
		return false
	case f == famHashes:
		return m.families&zipline.Hashes != 0
	case f == famLists:
		return m.families&zipline.Lists != 0
	case f == famStringsNotLists:
		return m.families&zipline.Lists == 0
	}
	return true
}

// plainKeys are the keys a compressing mode's rule keeps plain: two of the
// strings' and hashes' keys, so that every command that works on stored
// bytes, every script and every move meets keys on both sides of the
// compressed scope.
var plainKeys = map[string]bool{"k4": true, "k5": true}

// inScope reports whether zipline may store key's values compressed.
func (m mode) inScope(key string) bool { return m.comp != "off" && !plainKeys[key] }

func (m mode) options(addr string) zipline.Options {
	o := zipline.Options{Addr: addr, Protocol: m.proto}
	rules := []zipline.CompressionRule{{Pattern: "k[45]", Never: true}}
	switch m.comp {
	case "zstd":
		o.Compression = zipline.Compression{Backend: codec.Zstd, MinSize: m.minSize, Families: m.families, Rules: rules}
	case "lz4":
		o.Compression = zipline.Compression{Backend: codec.LZ4, MinSize: m.minSize, Families: m.families, Rules: rules}
	}
	return o
}

// modes returns the modes the flags select: by default both protocols
// times compression off, zstd and LZ4, where zstd compresses hashes and
// lists too on RESP3 and LZ4 on RESP2.
func modes(t *testing.T, s uint64) []mode {
	protos := []int{2, 3}
	switch *flagProto {
	case "2":
		protos = []int{2}
	case "3":
		protos = []int{3}
	case "all", "":
	default:
		t.Fatalf("-difftest.proto %q: want 2, 3 or all", *flagProto)
	}
	comps := []string{"off", "zstd", "lz4"}
	if *flagComp != "all" && *flagComp != "" {
		comps = strings.Split(*flagComp, ",")
	}
	minSize := *flagMinSize
	if minSize == 0 {
		minSize = 6 + int(s%11)
	}
	var out []mode
	for _, c := range comps {
		if c != "off" && c != "zstd" && c != "lz4" {
			t.Fatalf("-difftest.comp %q: want off, zstd, lz4 or all", c)
		}
		for _, p := range protos {
			m := mode{proto: p, comp: c, minSize: minSize}
			switch *flagFamilies {
			case "mode", "":
				if c == "zstd" && p == 3 || c == "lz4" && p == 2 {
					m.families = zipline.Hashes | zipline.Lists
				}
			case "hashes+lists":
				m.families = zipline.Hashes | zipline.Lists
			case "none":
			default:
				t.Fatalf("-difftest.families %q: want mode, none or hashes+lists", *flagFamilies)
			}
			out = append(out, m)
		}
	}
	return out
}

// serverPair is two servers of one kind: zipline's and go-redis's.
type serverPair struct {
	kind       testbed.Kind
	zsrv, gsrv *testbed.Server
}

// startPair starts two servers with persistence off (testbed's
// default) on free loopback ports; Stop ends each by its PID. hz 100 makes
// a blocking command's 10 ms timeout take about 10 ms, not the 100 ms of
// the default server tick. zset-max-listpack-value 128 keeps the sorted
// sets ZADD makes (members up to 96 bytes) listpacks, where a
// lexicographic range over members of different scores is a scan in
// order, the same on both servers, and so compared exactly (lexRange,
// rows_collections_test.go).
func startPair(t *testing.T, kind testbed.Kind) *serverPair {
	p := &serverPair{kind: kind}
	cfg := testbed.Config{Kind: kind, Args: []string{"--hz", "100", "--zset-max-listpack-value", "128"}}
	var err error
	if p.zsrv, err = testbed.Start(cfg); err != nil {
		t.Fatalf("start %s: %v", kind, err)
	}
	t.Cleanup(p.zsrv.Stop)
	if p.gsrv, err = testbed.Start(cfg); err != nil {
		t.Fatalf("start %s: %v", kind, err)
	}
	t.Cleanup(p.gsrv.Stop)
	return p
}

func kinds(t *testing.T) []testbed.Kind {
	var out []testbed.Kind
	for _, k := range []testbed.Kind{testbed.Redis, testbed.Valkey} {
		if *flagKind != "all" && *flagKind != "" && *flagKind != string(k) {
			continue
		}
		if _, err := testbed.Binary(k); err != nil {
			if *flagKind == string(k) {
				t.Fatalf("%s: %v", k, err)
			}
			t.Logf("%s: not installed, skipped (%v)", k, err)
			continue
		}
		out = append(out, k)
	}
	return out
}

// TestDifferential runs the same seeded command sequence through zipline
// and go-redis in every mode, on every server kind installed, and fails on
// any difference in a reply or in the final key space.
func TestDifferential(t *testing.T) {
	s := seed(t)
	ks := kinds(t)
	if len(ks) == 0 {
		t.Skip("no redis-server or valkey-server installed (scripts/setup.sh)")
	}
	ms := modes(t, s)
	t.Logf("seed %d, %d commands per mode", s, *flagN)
	for _, k := range ks {
		t.Run(string(k), func(t *testing.T) {
			pair := startPair(t, k)
			for _, m := range ms {
				t.Run(m.String(), func(t *testing.T) { runMode(t, pair, m, s, *flagN) })
			}
		})
	}
}

// runner runs one mode: one zipline Client, one go-redis client, one
// command sequence.
type runner struct {
	t    *testing.T
	m    mode
	pair *serverPair
	seed uint64
	n    int
	zc   *zipline.Client
	rc   *redis.Client

	idx     int         // commands run so far
	hist    []histEntry // the most recent commands, for reports
	diffs   map[string]*diff
	order   []string // signatures in the order first seen
	ndiff   int
	stopped bool
	// goBroken: go-redis returned a client-side error; it is reconnected
	// before the next unit.
	goBroken bool
	// discarded: the transaction being compared was refused by zipline
	// and discarded by go-redis's server (EXECABORT: it held a command
	// the server does not have), so none of its commands ran on either
	// side, whatever error each got when queued (compareGroup).
	discarded bool
}

type histEntry struct {
	idx    int
	where  string // "", "BATCH", "TX", "WATCH read", ...
	desc   string
	keys   []string
	zr, gr string
}

const histLen = 4096

// diff is one kind of discrepancy: its first occurrence in full, and how
// often it recurred.
type diff struct {
	report string
	count  int
}

// newRunner empties both servers and connects a client to each.
func newRunner(t *testing.T, pair *serverPair, m mode, seed uint64, n int) *runner {
	ctx := context.Background()
	// Fresh servers for each mode: empty, and no cached scripts, so that
	// Script.Run's fallback from EVALSHA to EVAL is exercised too.
	for _, s := range []*testbed.Server{pair.zsrv, pair.gsrv} {
		if _, err := s.Do(ctx, "FLUSHALL"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Do(ctx, "SCRIPT", "FLUSH"); err != nil {
			t.Fatal(err)
		}
	}
	zc, err := zipline.New(m.options(pair.zsrv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zc.Close() })
	r := &runner{t: t, m: m, pair: pair, seed: seed, n: n, zc: zc, diffs: map[string]*diff{}}
	r.dialGo()
	t.Cleanup(func() { r.rc.Close() })
	if err := r.rc.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// The script EVALSHA names and the library FCALL calls, on both
	// servers (rows_scripting_test.go).
	if err := loadScripts(ctx, zc, r.rc); err != nil {
		t.Fatal(err)
	}
	return r
}

// dialGo (re)connects the go-redis client. After a client-side error
// go-redis may leave a connection it could not read a reply from in the
// pool ("Conn is in a bad state"), failing the commands that follow: a new
// client keeps one difference from becoming many.
func (r *runner) dialGo() {
	if r.rc != nil {
		r.rc.Close()
	}
	r.rc = redis.NewClient(&redis.Options{Addr: r.pair.gsrv.Addr, Protocol: r.m.proto, DisableIdentity: true})
	r.goBroken = false
}

func runMode(t *testing.T, pair *serverPair, m mode, seed uint64, n int) {
	ctx := context.Background()
	start := time.Now()
	r := newRunner(t, pair, m, seed, n)
	zc := r.zc
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed)), now: time.Now()}

	units := map[unitKind]int{}
	nextCheck := checkEvery
	for r.idx < n && !r.stopped {
		if r.goBroken {
			r.dialGo()
		}
		u := g.unit()
		units[u.kind]++
		r.run(ctx, u)
		if r.idx >= nextCheck {
			r.checkKeyspace(ctx, fmt.Sprintf("after command #%d", r.idx-1))
			nextCheck = r.idx + checkEvery
		}
	}
	if !r.stopped {
		r.checkKeyspace(ctx, "at the end")
	}
	st := zc.Stats().Compression
	t.Logf("%s %s: %d commands (%d single, %d batches, %d transactions, %d watches) in %v; compressed %d values, skipped %d, expanded %d",
		pair.kind, m, r.idx, units[uSingle], units[uBatch], units[uTx], units[uWatch], time.Since(start).Round(time.Millisecond),
		st.Compressed, st.Skipped, st.Decompressed)
	if m.comp != "off" && st.Compressed == 0 {
		t.Errorf("compression is on but no value was compressed: the test is not exercising it")
	}
	if r.ndiff > 0 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%d differences between zipline and go-redis (%s, %s), %d kinds; the first of each:\n",
			r.ndiff, pair.kind, m, len(r.order))
		for i, sig := range r.order {
			d := r.diffs[sig]
			fmt.Fprintf(&sb, "\n--- difference %d of %d: %s (seen %d times)\n%s", i+1, len(r.order), sig, d.count, d.report)
		}
		if r.stopped {
			fmt.Fprintf(&sb, "\n(stopped after %d differences: -difftest.maxfail)\n", r.ndiff)
		}
		t.Error(sb.String())
	}
}

// checkEvery is how many commands run between key space comparisons.
const checkEvery = 500

// unitKind is how a group of commands is sent.
type unitKind uint8

const (
	uSingle unitKind = iota
	uBatch
	uTx
	uWatch
)

func (k unitKind) String() string {
	return [...]string{"", "BATCH", "TX", "WATCH"}[k]
}

// unit is what runs at once: one command, a Batch, a Tx, or a Watch (keys
// watched, commands read on the watched connection, maybe a write by
// another connection to a watched key, then a transaction).
type unit struct {
	kind      unitKind
	ops       []*op // the command, or the Batch's, or the transaction's
	watch     []string
	reads     []*op
	interfere *op
}

func (g *gen) op() *op {
	total := 0
	for _, r := range table {
		total += r.weight
	}
	for {
		n := g.intn(total)
		for _, r := range table {
			if n -= r.weight; n < 0 {
				if o := r.make(g); o != nil {
					return o
				}
				break
			}
		}
	}
}

func (g *gen) queueable() *op {
	for {
		if o := g.op(); o.queueable() {
			return o
		}
	}
}

func (g *gen) unit() *unit {
	switch p := g.intn(100); {
	case p < 74:
		return &unit{kind: uSingle, ops: []*op{g.op()}}
	case p < 86:
		u := &unit{kind: uBatch}
		for range 2 + g.intn(5) {
			u.ops = append(u.ops, g.queueable())
		}
		return u
	case p < 94:
		u := &unit{kind: uTx}
		for range 2 + g.intn(4) {
			u.ops = append(u.ops, g.queueable())
		}
		return u
	}
	u := &unit{kind: uWatch, watch: g.keys(bandAny, 1, 3)}
	for range g.intn(3) {
		u.reads = append(u.reads, g.queueable())
	}
	if g.intn(3) == 0 {
		// Another connection writes a watched key: EXEC must abort.
		k, v := pick(g, u.watch...), g.value()
		u.interfere = &op{name: "SET", desc: cmdline("SET", k, v) + " (from another connection)", keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Set(ctx, k, v, 0) }}
		typed(u.interfere, zOK, okOnly(func(ctx ctxT, c zcli) error { return c.Set(ctx, k, v) }), nil)
	}
	for range 1 + g.intn(4) {
		u.ops = append(u.ops, g.queueable())
	}
	return u
}

// refused reports whether zipline must refuse o in this mode.
func (r *runner) refused(o *op) bool {
	switch {
	case o.invalid:
		return true
	case r.m.compressed(o.moves) && len(o.keys) >= 2:
		return r.m.inScope(o.keys[0]) && !r.m.inScope(o.keys[1])
	case !r.m.compressed(o.refuse):
		return false
	case o.refuseAlways:
		return true
	}
	for _, k := range o.keys {
		if r.m.inScope(k) {
			return true
		}
	}
	return false
}

// run runs one unit on both sides and compares every reply.
func (r *runner) run(ctx context.Context, u *unit) {
	switch u.kind {
	case uSingle:
		r.single(ctx, u.ops[0], "", r.zc, r.rc)
	case uBatch, uTx:
		r.group(ctx, u)
	case uWatch:
		r.watch(ctx, u)
	}
}

// single runs one command directly, on zc and gc.
func (r *runner) single(ctx context.Context, o *op, where string, zc *zipline.Client, gc goCmdable) {
	if o.before != nil {
		o.before(ctx, r)
	}
	z := o.z(ctx, zc)
	var g reply
	if z.kind == kRefused && r.refused(o) {
		g = reply{kind: kSkipped} // zipline sent nothing: neither does go-redis
	} else {
		g = o.runGo(ctx, gc)
	}
	r.compare(ctx, o, where, z, g)
	if o.after != nil {
		o.after(ctx, r)
	}
}

// compare records one command's replies and any difference.
func (r *runner) compare(ctx context.Context, o *op, where string, z, g reply) {
	idx := r.idx
	r.idx++
	r.remember(histEntry{idx: idx, where: where, desc: o.desc, keys: o.keys, zr: show(z.String()), gr: show(g.String())})
	if g.kind == kClient {
		r.goBroken = true
	}
	if *flagTrace {
		r.t.Logf("#%d %s %s\n\tzipline:  %s\n\tgo-redis: %s", idx, where, o.desc, show(z.String()), show(g.String()))
	}
	var problem, sig string
	switch {
	case r.refused(o):
		if z.kind != kRefused {
			problem = "zipline did not refuse a command that works on stored bytes while " + r.m.comp + " compression is on"
			if o.invalid {
				problem = "zipline did not refuse arguments the server or go-redis refuses"
			}
			sig = o.name + ": not refused"
		}
	case z.kind == kRefused && missingCommand(g, where):
	case z.kind == kRefused && r.discarded && g.kind == kErr:
	case z.kind == kRefused:
		problem = "zipline refused a command it should have sent"
		sig = "refused a command it should have sent (" + z.text + ")"
		if where != "" {
			sig += " in a " + strings.Fields(where)[0]
		}
	case o.same != nil:
		if !o.same(ctx, r, z, g) {
			problem = "replies differ"
		}
	case !sameReply(z, g):
		problem = "replies differ"
	}
	if problem == "" {
		return
	}
	if sig == "" {
		sig = o.name + ": zipline " + z.class() + ", go-redis " + g.class()
	}
	r.record(sig, idx, where, o.desc, o.keys, problem, z, g)
	r.repair(ctx, o.keys)
}

// missingCommand reports whether g says the server does not have the
// command (or, in a transaction, discarded it for holding such a command):
// zipline refuses a command its server does not have before sending it
// (client.go, notOnServer: "is not on this server"), where the server
// answers "ERR unknown command", and EXECABORT to the transaction that
// holds one. The outcome is the same: nothing ran.
func missingCommand(g reply, where string) bool {
	inTx := strings.HasPrefix(where, "TX") || strings.Contains(where, ", TX")
	return g.kind == kErr && (strings.HasPrefix(g.text, "ERR unknown command") || inTx && strings.HasPrefix(g.text, "EXECABORT"))
}

func (r *runner) remember(h histEntry) {
	if len(r.hist) == histLen {
		copy(r.hist, r.hist[histLen/2:])
		r.hist = r.hist[:histLen/2]
	}
	r.hist = append(r.hist, h)
}

// record keeps the first report of each kind of difference.
func (r *runner) record(sig string, idx int, where, desc string, keys []string, problem string, z, g reply) {
	r.ndiff++
	if r.ndiff >= *flagMaxFail {
		r.stopped = true
	}
	if d, ok := r.diffs[sig]; ok {
		d.count++
		return
	}
	var sb strings.Builder
	if where != "" {
		where = " (in " + where + ")"
	}
	fmt.Fprintf(&sb, "seed %d, %s %s, command #%d%s: %s\n", r.seed, r.pair.kind, r.m, idx, where, problem)
	fmt.Fprintf(&sb, "  command:  %s\n", desc)
	zs, gs := showPair(z.String(), g.String())
	fmt.Fprintf(&sb, "  zipline:  %s\n", zs)
	fmt.Fprintf(&sb, "  go-redis: %s\n", gs)
	if h := r.history(keys, idx); h != "" {
		fmt.Fprintf(&sb, "  earlier commands on these keys (most recent last):\n%s", h)
	}
	fmt.Fprintf(&sb, "  replay: cd bench && go test -count=1 ./difftest/ -run 'TestDifferential/%s/%s$' -difftest.seed=%d -difftest.n=%d -difftest.minsize=%d -difftest.families=%s\n",
		r.pair.kind, regexp.QuoteMeta(r.m.String()), r.seed, idx+1, r.m.minSize, familiesFlag(r.m))
	r.diffs[sig] = &diff{report: sb.String(), count: 1}
	r.order = append(r.order, sig)
}

func familiesFlag(m mode) string {
	if m.families&(zipline.Hashes|zipline.Lists) != 0 {
		return "hashes+lists"
	}
	return "none"
}

// history lists up to 12 earlier commands that touched any of keys.
func (r *runner) history(keys []string, before int) string {
	var lines []string
	for i := len(r.hist) - 1; i >= 0 && len(lines) < 12; i-- {
		h := r.hist[i]
		if h.idx >= before || !slices.ContainsFunc(h.keys, func(k string) bool { return slices.Contains(keys, k) }) {
			continue
		}
		where := ""
		if h.where != "" {
			where = " [" + h.where + "]"
		}
		lines = append(lines, fmt.Sprintf("    #%d%s %s -> zipline %s | go-redis %s\n", h.idx, where, h.desc, h.zr, h.gr))
	}
	slices.Reverse(lines)
	return strings.Join(lines, "")
}

// group runs a Batch or a Tx.
func (r *runner) group(ctx context.Context, u *unit) {
	where := fmt.Sprintf("%s of %d", u.kind, len(u.ops))
	b := r.zc.Batch()
	if u.kind == uTx {
		b = r.zc.Tx()
	}
	zs := make([]func() reply, len(u.ops))
	for i, o := range u.ops {
		zs[i] = o.zq(b)
	}
	zerr := b.Exec(ctx)
	gs, gerr := r.goGroup(ctx, u, r.rc, nil)
	r.compareGroup(ctx, u, where, zs, zerr, gs, gerr)
}

// goGroup runs u.ops in a go-redis pipeline (TxPipelined, on tx if given,
// for a transaction), and returns each command's reply and the error
// zipline's Exec must return. Commands zipline must refuse are not sent:
// in a batch such a command "fails alone, with its own error, and the
// others run; in a transaction nothing is sent, and every command fails
// with the first refusal" (batch.go, enqueue).
func (r *runner) goGroup(ctx context.Context, u *unit, c *redis.Client, tx *redis.Tx) ([]reply, reply) {
	gs := make([]reply, len(u.ops))
	var send []int
	for i, o := range u.ops {
		if !r.refused(o) {
			send = append(send, i)
			continue
		}
		if u.kind != uBatch {
			for i := range gs {
				gs[i] = reply{kind: kSkipped}
			}
			return gs, reply{kind: kRefused}
		}
		gs[i] = reply{kind: kSkipped}
	}
	if len(send) > 0 {
		cmds := make([]redis.Cmder, len(u.ops))
		fill := func(p redis.Pipeliner) error {
			for _, i := range send {
				cmds[i] = u.ops[i].g(ctx, p)
			}
			return nil
		}
		var err error
		switch {
		case u.kind == uBatch:
			_, err = c.Pipelined(ctx, fill)
		case tx != nil:
			_, err = tx.TxPipelined(ctx, fill)
		default:
			_, err = c.TxPipelined(ctx, fill)
		}
		if errors.Is(err, redis.TxFailedErr) {
			for i := range gs {
				gs[i] = reply{kind: kTxFailed}
			}
			return gs, reply{kind: kTxFailed}
		}
		for _, i := range send {
			gs[i] = u.ops[i].goReply(cmds[i])
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			// A transaction the server discarded (a command refused when
			// queued): both clients return EXEC's EXECABORT, and give the
			// refused command its own error.
			if rr := gErr(err); rr.kind != kErr || strings.HasPrefix(rr.text, "EXECABORT") {
				return gs, rr
			}
		}
	}
	// The error Exec must return: the first refusal or error reply.
	// go-redis's Pipelined returns the first error including redis.Nil, but
	// zipline's Exec documents that "a null reply is not an error here; the
	// futures report it as Nil" (batch.go, Batch.Exec), so nulls are
	// skipped.
	for _, g := range gs {
		switch g.kind {
		case kSkipped:
			return gs, reply{kind: kRefused}
		case kErr, kClient:
			return gs, g
		}
	}
	return gs, reply{kind: kVal, text: "(ok)"}
}

// execReply renders what Exec or Watch returned.
func execReply(err error) reply {
	if err == nil {
		return reply{kind: kVal, text: "(ok)"}
	}
	return zErr(err)
}

func (r *runner) compareGroup(ctx context.Context, u *unit, where string, zs []func() reply, zerr error, gs []reply, gerr reply) {
	var keys []string
	ze := execReply(zerr)
	// A command the server does not have, in a transaction: zipline
	// refuses it before sending and so fails the whole transaction with
	// its *CommandError, where go-redis's server refuses it when queued
	// and discards the transaction (EXECABORT); the other commands may
	// have got their own errors when queued (a wrong number of
	// arguments), but none ran.
	r.discarded = u.kind != uBatch && ze.kind == kRefused && gerr.kind == kErr && strings.HasPrefix(gerr.text, "EXECABORT")
	for i, o := range u.ops {
		keys = append(keys, o.keys...)
		r.compareIn(ctx, o, fmt.Sprintf("%s, #%d of %d", where, i+1, len(u.ops)), zs[i](), gs[i])
	}
	r.discarded = false
	exec := &op{name: u.kind.String() + " Exec", desc: u.kind.String() + " Exec (the error it returns)", keys: keys}
	if gerr.kind == kRefused {
		if ze.kind != kRefused {
			r.record(exec.name+": not refused", r.idx-1, where, exec.desc, keys,
				"a command in the group works on stored bytes, so zipline's Exec must return its *CommandError", ze, gerr)
		}
		return
	}
	if !sameReply(ze, gerr) && !(ze.kind == kRefused && missingCommand(gerr, u.kind.String())) {
		r.record(exec.name+": zipline "+ze.class()+", go-redis "+gerr.class(), r.idx-1, where, exec.desc, keys,
			"Exec's result differs from the first error reply go-redis saw", ze, gerr)
		r.repair(ctx, keys)
	}
}

// compareIn compares a command of a group. When go-redis sent nothing
// because zipline refused the group, zipline's futures must all hold the
// refusal.
func (r *runner) compareIn(ctx context.Context, o *op, where string, z, g reply) {
	if g.kind == kSkipped && !r.refused(o) {
		r.idx++
		r.remember(histEntry{idx: r.idx - 1, where: where, desc: o.desc, keys: o.keys, zr: show(z.String()), gr: g.String()})
		if z.kind != kRefused {
			r.record("not refused with its transaction", r.idx-1, where, o.desc, o.keys,
				"another command of the transaction is refused, so zipline's Exec must send none and fail every future with the *CommandError", z, g)
			r.repair(ctx, o.keys)
		}
		return
	}
	r.compare(ctx, o, where, z, g)
	if o.after != nil {
		o.after(ctx, r)
	}
}

// watch runs a Watch unit: zipline's Watch and go-redis's Watch, the same
// reads on the watched connection, the same interfering write from another
// connection, then the transaction.
func (r *runner) watch(ctx context.Context, u *unit) {
	where := fmt.Sprintf("WATCH %s", cmdline("", u.watch)[1:])
	var zreads []reply
	var zint reply
	var zs []func() reply
	zerr := r.zc.Watch(ctx, func(w *zipline.Client) error {
		for _, o := range u.reads {
			zreads = append(zreads, o.z(ctx, w))
		}
		if u.interfere != nil {
			zint = u.interfere.z(ctx, r.zc)
		}
		tx := w.Tx()
		for _, o := range u.ops {
			zs = append(zs, o.zq(tx))
		}
		return tx.Exec(ctx)
	}, u.watch...)

	var greads []reply
	var gint reply
	var gs []reply
	var gexec reply
	gerr := r.rc.Watch(ctx, func(tx *redis.Tx) error {
		for i, o := range u.reads {
			if zreads[i].kind == kRefused && r.refused(o) {
				greads = append(greads, reply{kind: kSkipped})
				continue
			}
			greads = append(greads, o.runGo(ctx, tx))
		}
		if u.interfere != nil {
			gint = u.interfere.runGo(ctx, r.rc)
		}
		gs, gexec = r.goGroup(ctx, &unit{kind: uTx, ops: u.ops}, r.rc, tx)
		return nil
	}, u.watch...)
	if gerr != nil {
		r.record("WATCH: go-redis failed", r.idx, where, where, u.watch, "go-redis's Watch failed", execReply(zerr), gErr(gerr))
		return
	}
	if zs == nil {
		// zipline's Watch failed before fn ran.
		r.record("WATCH: zipline failed", r.idx, where, where, u.watch, "zipline's Watch failed before running fn", execReply(zerr), gexec)
		return
	}
	for i, o := range u.reads {
		r.compareIn(ctx, o, where+", read", zreads[i], greads[i])
	}
	if u.interfere != nil {
		r.compareIn(ctx, u.interfere, where+", another connection", zint, gint)
	}
	r.compareGroup(ctx, &unit{kind: uTx, ops: u.ops}, where+", TX", zs, zerr, gs, gexec)
}
