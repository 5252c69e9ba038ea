package zipline

import (
	"bytes"
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// recordingHook records what each stage saw, and lets a test plug in
// behaviour.
type recordingHook struct {
	mu      sync.Mutex
	dials   []string
	seen    []string // "GET k", "BATCH MULTI SET EXEC"...
	process func(ctx context.Context, cmd *Cmd, next ProcessFunc) error
}

func (h *recordingHook) DialHook(next DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.mu.Lock()
		h.dials = append(h.dials, network+" "+addr)
		h.mu.Unlock()
		return next(ctx, network, addr)
	}
}

func (h *recordingHook) ProcessHook(next ProcessFunc) ProcessFunc {
	return func(ctx context.Context, cmd *Cmd) error {
		h.mu.Lock()
		words := []string{cmd.Name()}
		for _, a := range cmd.Args() {
			words = append(words, string(a))
		}
		h.seen = append(h.seen, strings.Join(words, " "))
		f := h.process
		h.mu.Unlock()
		if f != nil {
			return f(ctx, cmd, next)
		}
		return next(ctx, cmd)
	}
}

func (h *recordingHook) ProcessBatchHook(next ProcessBatchFunc) ProcessBatchFunc {
	return func(ctx context.Context, cmds []*Cmd) error {
		names := []string{"BATCH"}
		for _, c := range cmds {
			names = append(names, c.Name())
		}
		h.mu.Lock()
		h.seen = append(h.seen, strings.Join(names, " "))
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *recordingHook) last() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[len(h.seen)-1]
}

// Hooks observe every stage, can change a result, and can short-circuit a
// command so that it never reaches the server; OnCommand, itself a hook,
// still reports everything.
func TestHooks(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	outer, inner := &recordingHook{}, &recordingHook{}
	var events []CommandEvent
	var evMu sync.Mutex
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Hooks: []Hook{outer, inner},
		OnCommand: func(_ context.Context, ev CommandEvent) { evMu.Lock(); events = append(events, ev); evMu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	// Observe: the dial, a command with its arguments, a transaction.
	if len(outer.dials) != 1 || outer.dials[0] != "tcp "+srv.Addr || len(inner.dials) != 1 {
		t.Fatalf("dials seen: %v / %v", outer.dials, inner.dials)
	}
	if err := c.Set(ctx, "k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if got := outer.last(); got != "SET k v1" || inner.last() != got {
		t.Fatalf("hooks saw %q and %q", got, inner.last())
	}
	tx := c.Tx()
	tx.Incr("n")
	tx.Get("k")
	if err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if got := outer.last(); got != "BATCH MULTI INCR GET EXEC" {
		t.Fatalf("batch hook saw %q", got)
	}

	// Change: the inner hook rewrites a GET's reply.
	inner.process = func(ctx context.Context, cmd *Cmd, next ProcessFunc) error {
		err := next(ctx, cmd)
		if v, _ := cmd.Reply(); cmd.Name() == "GET" && err == nil {
			b, _ := v.AsBytes()
			cmd.SetReply(StringReply(bytes.ToUpper(b)), nil)
		}
		return err
	}
	if v, err := c.Get(ctx, "k"); err != nil || string(v) != "V1" {
		t.Fatalf("GET through a changing hook: %q %v", v, err)
	}

	// Short-circuit: the outer hook answers GETs of "local:" keys itself.
	var served atomic.Int64
	outer.process = func(ctx context.Context, cmd *Cmd, next ProcessFunc) error {
		if cmd.Name() == "GET" && bytes.HasPrefix(cmd.Args()[0], []byte("local:")) {
			served.Add(1)
			cmd.SetReply(StringReply([]byte("from the hook")), nil)
			return nil
		}
		return next(ctx, cmd)
	}
	before, _ := srv.Info(ctx, "commandstats")
	if v, err := c.Get(ctx, "local:1"); err != nil || string(v) != "from the hook" || served.Load() != 1 {
		t.Fatalf("short-circuited GET: %q %v", v, err)
	}
	if _, err := c.Get(ctx, "local:2"); err != nil {
		t.Fatal(err)
	}
	after, _ := srv.Info(ctx, "commandstats")
	if before["cmdstat_get"] != after["cmdstat_get"] {
		t.Fatalf("a short-circuited GET reached the server: %s -> %s", before["cmdstat_get"], after["cmdstat_get"])
	}
	// A short-circuit can fail a command too, with its own error.
	errHook := errors.New("refused by hook")
	outer.process = func(ctx context.Context, cmd *Cmd, next ProcessFunc) error { return errHook }
	if err := c.Set(ctx, "k", []byte("x")); !errors.Is(err, errHook) {
		t.Fatalf("hook error: %v", err)
	}
	outer.process = nil

	evMu.Lock()
	defer evMu.Unlock()
	var names []string
	for _, ev := range events {
		names = append(names, ev.Name)
	}
	if got := strings.Join(names, " "); got != "SET TX GET GET GET SET" {
		t.Fatalf("OnCommand saw %q", got)
	}
	if events[1].Commands != 2 || events[5].Err == nil {
		t.Fatalf("events %+v", events)
	}
}

// Hooks see commands as they go on the wire: values compressed; and the
// caller still gets the value as written.
func TestHooksSeeCompressedValues(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	h := &recordingHook{}
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Hooks: []Hook{h}, Compression: Compression{Backend: codec.Zstd}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "doc", jsonDoc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.last(), string(jsonDoc[:40])) {
		t.Fatal("the hook saw the value uncompressed")
	}
	if v, err := c.Get(ctx, "doc"); err != nil || !bytes.Equal(v, jsonDoc) {
		t.Fatalf("GET through a hook: %d bytes, %v", len(v), err)
	}
}

// Stats report the connection's gauges and counters: requests in flight
// while the server is paused, the batch-size histogram, the dedicated
// connections lent out, and compression bytes.
func TestStats(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Compression: Compression{Backend: codec.LZ4}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	before := c.Stats() // New's own requests (INFO cluster)
	if err := c.Set(ctx, "doc", jsonDoc); err != nil {
		t.Fatal(err)
	}
	resume := testkit.Pause(t, srv)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); c.Ping(ctx) }()
	}
	waitFor(t, func() bool { st := c.Stats(); return st.InFlight+st.Queued == 10 })
	st := c.Stats()
	if st.PendingBytes == 0 {
		t.Errorf("10 requests pending, PendingBytes %d", st.PendingBytes)
	}
	resume()
	wg.Wait()
	d, err := c.Dedicated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st = c.Stats()
	d.Close()
	var writes uint64
	for _, n := range st.WriteSizes {
		writes += n
	}
	if st.InFlight != 0 || st.Queued != 0 || st.Requests != before.Requests+11 || writes != st.Writes ||
		st.DedicatedOpen != 1 || st.DedicatedInUse != 1 || st.Compression.Compressed != 1 || st.Compression.BytesIn != uint64(len(jsonDoc)) {
		t.Fatalf("stats %+v", st)
	}
}

// Cmd.Name reads only the name: a hook that asks for it costs the same for
// a 1 MiB SET as for a PING.
func TestCmdNameReadsOnlyTheName(t *testing.T) {
	big := make([]byte, 1<<20)
	wire := appendCommandStrings(nil, "SET", "k", string(big))
	cmd := &Cmd{wire: wire}
	if n := testing.AllocsPerRun(100, func() {
		if cmd.Name() != "SET" || cmd.NArgs() != 2 {
			t.Fatal("name")
		}
	}); n > 1 {
		t.Fatalf("Name allocates %v times", n)
	}
	var total uint64
	var ms1, ms2 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	for range 100 {
		total += uint64(len(cmd.Name()))
	}
	runtime.ReadMemStats(&ms2)
	// Under one copy of the command for all hundred: other tests' goroutines
	// may allocate a little meanwhile, a Name that copied would add 100 MiB.
	if grew := ms2.TotalAlloc - ms1.TotalAlloc; grew >= 1<<20 {
		t.Fatalf("100 Names of a 1 MiB command allocated %d bytes", grew)
	}
	for _, bad := range [][]byte{nil, []byte("*"), []byte("*1\r\n$9\r\nGET\r\n"), []byte("+OK\r\n")} {
		if (&Cmd{wire: bad}).Name() != "" {
			t.Errorf("Name of %q", bad)
		}
	}
	_ = total
}
