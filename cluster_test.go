package zipline

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/cmdspec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// clusterClient starts a 3×1 cluster of kind and a Client on it, seeded
// with one node's address (the rest is discovered).
func clusterClient(t testing.TB, kind testkit.Kind, opts Options) (*Client, *testkit.Cluster) {
	t.Helper()
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Kind: kind})
	opts.Addrs = cl.Addrs()[:1]
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cl
}

// The same Client, on a cluster: commands go to their slot's owner,
// multi-key commands are split by slot and answered in the caller's order,
// commands that cannot be split get an error naming the slots, and Batch,
// Tx, Watch, scripts, blocking commands, SCAN, Dedicated and compression
// all work. On Redis 7.0 and Valkey 9.1.
func TestCluster(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			// The scripts' keys are kept plain: a script given a key in the
			// compressed scope is refused (TestScriptOutcomeIndependentOfValueSize).
			c, cl := clusterClient(t, kind, Options{Compression: Compression{Backend: codec.LZ4,
				Rules: []CompressionRule{{Pattern: "s[a-e]", Never: true}}}})
			ctx := context.Background()
			keys := make([]string, 200)
			for i := range keys {
				keys[i] = "key:" + strconv.Itoa(i)
			}
			t.Run("routing", func(t *testing.T) {
				for _, k := range keys {
					if err := c.Set(ctx, k, []byte("v-"+k)); err != nil {
						t.Fatal(err)
					}
				}
				// Each key is on its owner, as the server sees it.
				for _, k := range keys[:20] {
					owner, err := cl.KeyOwner(ctx, k)
					if err != nil {
						t.Fatal(err)
					}
					if v, err := owner.Do(ctx, "GET", k); err != nil || string(v.Bytes()) != "v-"+k {
						t.Fatalf("%s is not on its owner %s: %v %v", k, owner.Addr, v, err)
					}
				}
			})
			t.Run("multi-key split by slot", func(t *testing.T) {
				// Keys of another type read as nil, as MGET has them, whether
				// alone in their slot (a part of one key goes as GET) or not.
				if _, err := c.HSet(ctx, "mg:hash", FieldValue{"f", []byte("v")}); err != nil {
					t.Fatal(err)
				}
				if _, err := c.HSet(ctx, "{mg}:hash", FieldValue{"f", []byte("v")}); err != nil {
					t.Fatal(err)
				}
				if err := c.Set(ctx, "{mg}:s", []byte("s")); err != nil {
					t.Fatal(err)
				}
				vs, err := c.MGet(ctx, append(slices.Clone(keys[:100]), "missing", "mg:hash", "{mg}:hash", "{mg}:s")...)
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range vs[:100] {
					if string(v) != "v-"+keys[i] {
						t.Fatalf("MGET %d: %q", i, v)
					}
				}
				if vs[100] != nil || vs[101] != nil || vs[102] != nil || string(vs[103]) != "s" {
					t.Fatalf("MGET of a missing key, two hashes and a string: %q", vs[100:])
				}
				pairs := make([]KeyValue, 50)
				for i := range pairs {
					pairs[i] = KeyValue{"m:" + strconv.Itoa(i), []byte(strconv.Itoa(i))}
				}
				if err := c.MSet(ctx, pairs...); err != nil {
					t.Fatal(err)
				}
				if n, err := c.Exists(ctx, "m:1", "m:2", "nope", "m:3"); err != nil || n != 3 {
					t.Fatalf("EXISTS %d %v", n, err)
				}
				if n, err := c.Touch(ctx, "m:1", "m:2"); err != nil || n != 2 {
					t.Fatalf("TOUCH %d %v", n, err)
				}
				if n, err := c.Del(ctx, "m:1", "m:2", "nope"); err != nil || n != 2 {
					t.Fatalf("DEL %d %v", n, err)
				}
				if n, err := c.Unlink(ctx, "m:3", "m:4"); err != nil || n != 2 {
					t.Fatalf("UNLINK %d %v", n, err)
				}
				v, err := c.Do(ctx, "MGET", "m:10", "m:11", "m:12")
				if s, _ := v.AsStrings(); err != nil || strings.Join(s, ",") != "10,11,12" {
					t.Fatalf("Do MGET %v %v", v, err)
				}
			})
			t.Run("cross-slot commands refused", func(t *testing.T) {
				for _, args := range [][]any{{"MSETNX", "a", "1", "b", "2"}, {"RENAME", "a", "b"}, {"SMOVE", "a", "b", "m"},
					{"SINTERSTORE", "a", "b", "c"}, {"EVAL", "return 1", 2, "sa", "sb"}} {
					_, err := c.Do(ctx, args...)
					var ce *CrossSlotError
					if !errors.As(err, &ce) || !errors.Is(err, ErrNotSent) || len(ce.Slots) < 2 {
						t.Errorf("%v: %v, want a CrossSlotError naming the slots", args[0], err)
					}
				}
				if _, err := c.MSetNX(ctx, KeyValue{"{t}a", []byte("1")}, KeyValue{"{t}b", []byte("2")}); err != nil {
					t.Errorf("MSETNX within one slot: %v", err)
				}
			})
			t.Run("batch across nodes", func(t *testing.T) {
				b := c.Batch()
				var gets []*Future[[]byte]
				for _, k := range keys[100:] {
					gets = append(gets, b.Get(k))
				}
				incr := b.Incr("counter")
				mget := b.MGet(keys[:10]...)
				if err := b.Exec(ctx); err != nil {
					t.Fatal(err)
				}
				for i, f := range gets {
					if v, err := f.Result(); err != nil || string(v) != "v-"+keys[100+i] {
						t.Fatalf("batch GET %d: %q %v", i, v, err)
					}
				}
				if incr.Val() != 1 || len(mget.Val()) != 10 || string(mget.Val()[9]) != "v-"+keys[9] {
					t.Fatalf("batch INCR %v MGET %v", incr.Val(), mget.Val())
				}
			})
			t.Run("tx and watch on one slot", func(t *testing.T) {
				tx := c.Tx()
				a := tx.IncrBy("{acct:7}:balance", 10)
				tx.IncrBy("{acct:7}:log", 1)
				if err := tx.Exec(ctx); err != nil || a.Val() != 10 {
					t.Fatalf("hash-tagged Tx: %v %v", a.Val(), err)
				}
				cross := c.Tx()
				cross.Incr("x")
				cross.Incr("y")
				var ce *CrossSlotError
				if err := cross.Exec(ctx); !errors.As(err, &ce) {
					t.Fatalf("cross-slot Tx: %v", err)
				}
				err := c.Watch(ctx, func(w *Client) error {
					n, err := w.Get(ctx, "{acct:7}:balance")
					if err != nil {
						return err
					}
					v, _ := strconv.Atoi(string(n))
					tx := w.Tx()
					tx.Set("{acct:7}:balance", []byte(strconv.Itoa(v*2)))
					return tx.Exec(ctx)
				}, "{acct:7}:balance")
				if v, _ := c.Get(ctx, "{acct:7}:balance"); err != nil || string(v) != "20" {
					t.Fatalf("Watch: %q %v", v, err)
				}
				if err := c.Watch(ctx, func(*Client) error { return nil }, "x", "y"); !errors.As(err, &ce) {
					t.Fatalf("Watch across slots: %v", err)
				}
			})
			t.Run("scripts", func(t *testing.T) {
				s := NewScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
				for _, k := range []string{"sa", "sb", "sc", "sd", "se"} { // several nodes: NOSCRIPT on each, once
					if v, err := s.Run(ctx, c, []string{k}, 5); err != nil {
						t.Fatal(err)
					} else if n, _ := v.AsInt64(); n != 5 {
						t.Fatalf("script on %s: %v", k, v)
					}
				}
				if err := s.Load(ctx, c); err != nil {
					t.Fatal(err)
				}
			})
			t.Run("blocking commands", func(t *testing.T) {
				done := make(chan KeyValue, 1)
				go func() { kv, _ := c.BLPop(ctx, 5*time.Second, "jobs"); done <- kv }()
				waitFor(t, func() bool {
					owner, _ := cl.KeyOwner(ctx, "jobs")
					info, _ := owner.Info(ctx, "clients")
					return info["blocked_clients"] == "1"
				})
				if _, err := c.RPush(ctx, "jobs", []byte("job")); err != nil {
					t.Fatal(err)
				}
				if kv := <-done; string(kv.Value) != "job" {
					t.Fatalf("BLPOP %+v", kv)
				}
			})
			t.Run("scan and dbsize walk every primary", func(t *testing.T) {
				var seen []string
				for k, err := range c.Scan(ctx, ScanOptions{Match: "key:*", Count: 100}) {
					if err != nil {
						t.Fatal(err)
					}
					seen = append(seen, k)
				}
				slices.Sort(seen)
				seen = slices.Compact(seen)
				if len(seen) != len(keys) {
					t.Fatalf("SCAN found %d of %d keys", len(seen), len(keys))
				}
				topo, err := cl.Topology(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var total int64
				for _, p := range topo.Primaries() {
					if v, err := p.Server.Do(ctx, "DBSIZE"); err == nil {
						total += v.Int()
					}
				}
				if n, err := c.DBSize(ctx); err != nil || n != total {
					t.Fatalf("DBSIZE %d %v, the primaries hold %d", n, err, total)
				}
			})
			t.Run("dedicated binds to the first key's node", func(t *testing.T) {
				d, err := c.Dedicated(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if v, err := d.Get(ctx, keys[5]); err != nil || string(v) != "v-"+keys[5] {
					t.Fatalf("Dedicated GET %q %v", v, err)
				}
				if _, err := d.Do(ctx, "CLIENT", "SETNAME", "lease"); err != nil { // connection state: allowed here
					t.Fatal(err)
				}
			})
			t.Run("compression", func(t *testing.T) {
				if err := c.Set(ctx, "doc", jsonDoc); err != nil {
					t.Fatal(err)
				}
				owner, _ := cl.KeyOwner(ctx, "doc")
				if raw, _ := owner.Do(ctx, "GET", "doc"); !codec.IsCompressed(raw.Bytes()) {
					t.Fatal("stored uncompressed on the cluster")
				}
				if v, err := c.Get(ctx, "doc"); err != nil || string(v) != string(jsonDoc) {
					t.Fatalf("GET doc: %d bytes, %v", len(v), err)
				}
			})
		})
	}
}

// The view from CLUSTER SLOTS (servers older than 7) equals the one from
// CLUSTER SHARDS. (Both hide replicas whose replication offset the node has
// not heard of yet, so the cluster gets a write on each shard first.)
func TestClusterViewsAgree(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{})
	ctx := context.Background()
	c, err := New(Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 30 {
		c.Set(ctx, strconv.Itoa(i), []byte("x"))
	}
	waitFor(t, func() bool {
		for _, n := range cl.Nodes() {
			v, err := n.Do(ctx, "CLUSTER", "SLOTS")
			if err != nil {
				return false
			}
			for _, r := range v.Elems() {
				if len(r.Elems()) < 4 { // start, end, primary, replica
					return false
				}
			}
		}
		return true
	})
	for _, n := range cl.Nodes() {
		shards, err := cmdspec.Ask(ctx, n.Addr, 2, "CLUSTER", "SHARDS")
		if err != nil {
			t.Fatal(err)
		}
		slots, err := cmdspec.Ask(ctx, n.Addr, 2, "CLUSTER", "SLOTS")
		if err != nil {
			t.Fatal(err)
		}
		a, err := parseShards(shards, n.Addr)
		if err != nil {
			t.Fatal(err)
		}
		b, err := parseSlots(slots, n.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if a.hash != b.hash || a.covered() != slotCount {
			t.Fatalf("node %s: SHARDS %+v\nSLOTS %+v", n.Addr, a.shards, b.shards)
		}
	}
}

// ReadFrom sends reads to replicas (which answer them, READONLY), and
// writes to primaries.
func TestClusterReplicaReads(t *testing.T) {
	c, cl := clusterClient(t, testkit.Redis, Options{ReadFrom: ReadPreferReplica})
	ctx := context.Background()
	for i := range 50 {
		if err := c.Set(ctx, "r:"+strconv.Itoa(i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The reads wait for replication rather than follow the SETs at once,
	// as in TestClusterReadFromModes: WAIT on each primary until its
	// replica has acknowledged every write, and until the replica holds as
	// many keys (a replica that resynchronised on a loaded machine serves
	// its old data meanwhile). Then no read from a replica finds Nil.
	for _, p := range topo.Primaries() {
		waitReplicated(t, p.Server, 1)
		for _, r := range topo.Replicas(p.ID) {
			waitSameKeys(t, p.Server, r.Server)
		}
	}
	before := getCallsPerNode(t, topo)
	for i := range 50 {
		if v, err := c.Get(ctx, "r:"+strconv.Itoa(i)); err != nil || string(v) != "v" {
			t.Fatalf("GET from a replica: %q %v", v, err)
		}
	}
	onReplicas, onPrimaries := getsSince(t, topo, before)
	if onReplicas < 40 || onPrimaries > 10 {
		t.Fatalf("%d GETs on replicas and %d on primaries", onReplicas, onPrimaries)
	}
	t.Logf("50 reads: %d served by replicas, %d by primaries", onReplicas, onPrimaries)
}

// getCallsPerNode counts the GETs each node of topo has served so far.
func getCallsPerNode(t *testing.T, topo testkit.Topology) map[string]int {
	t.Helper()
	calls := map[string]int{}
	for _, n := range topo.Nodes {
		calls[n.Addr] = getCalls(t, n.Server)
	}
	return calls
}

// getsSince counts the GETs served since before, on replicas and on
// primaries.
func getsSince(t *testing.T, topo testkit.Topology, before map[string]int) (onReplicas, onPrimaries int) {
	t.Helper()
	for _, n := range topo.Nodes {
		d := getCalls(t, n.Server) - before[n.Addr]
		if n.Role == testkit.Primary {
			onPrimaries += d
		} else {
			onReplicas += d
		}
	}
	return onReplicas, onPrimaries
}

// waitReplicated WAITs on primary until replicas of its replicas have
// acknowledged every write it took (a replica still in its first sync
// acknowledges none), so that a read from them never finds Nil; it fails
// the test after 10 s.
func waitReplicated(t *testing.T, primary *testkit.Server, replicas int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		v, err := primary.Do(context.Background(), "WAIT", replicas, 500)
		if err != nil {
			t.Fatal(err)
		}
		if v.Int() >= int64(replicas) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d replicas of %s did not acknowledge the writes within 10s", replicas, primary.Addr)
		}
	}
}

// waitSameKeys waits, up to 10 s, until replica holds as many keys as
// primary.
func waitSameKeys(t *testing.T, primary, replica *testkit.Server) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		p, err1 := primary.Do(context.Background(), "DBSIZE")
		r, err2 := replica.Do(context.Background(), "DBSIZE")
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if p.Int() == r.Int() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s holds %d keys, its primary %s %d", replica.Addr, r.Int(), primary.Addr, p.Int())
		}
		time.Sleep(5 * time.Millisecond) // waiting for replication, bounded
	}
}

// getCalls returns how many GETs a server ran.
func getCalls(t *testing.T, s *testkit.Server) int { return serverCalls(t, s, "get") }

// serverCalls returns how many times a server ran a command (its
// INFO commandstats name: "get", "client|caching").
func serverCalls(t *testing.T, s *testkit.Server, name string) int {
	t.Helper()
	info, err := s.Info(context.Background(), "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	calls, _, _ := strings.Cut(strings.TrimPrefix(info["cmdstat_"+name], "calls="), ",")
	n, _ := strconv.Atoi(calls)
	return n
}

// With two replicas per shard the two replica modes differ as documented:
// ReadPreferReplica reads each shard from one replica only, and
// ReadReplicaRoundRobin spreads the reads of each shard over both. With
// one replica killed, both read that shard from the survivor, not from the
// primary, and no read fails.
func TestClusterReplicaChoice(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Kind: testkit.Redis, Replicas: 2})
	ctx := context.Background()
	clients := map[ReadFrom]*Client{}
	for _, from := range []ReadFrom{ReadPreferReplica, ReadReplicaRoundRobin} {
		c, err := New(Options{Addrs: cl.Addrs()[:1], ReadFrom: from, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		clients[from] = c
	}
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = "rc:" + strconv.Itoa(i)
		if err := clients[ReadPreferReplica].Set(ctx, keys[i], []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shardOf := map[string]string{} // key -> its primary's ID
	for _, k := range keys {
		p, ok := topo.Owner(testkit.KeySlot(k))
		if !ok {
			t.Fatalf("no owner for %s", k)
		}
		shardOf[k] = p.ID
	}
	for _, p := range topo.Primaries() {
		if n := len(topo.Replicas(p.ID)); n != 2 {
			t.Fatalf("primary %s has %d replicas, want 2", p.Addr, n)
		}
		waitReplicated(t, p.Server, 2) // both replicas hold every key before anything reads them
		for _, r := range topo.Replicas(p.ID) {
			// A replica that resynchronises (a loaded machine can make a 1 s
			// node timeout flap) serves its old, empty data meanwhile: wait
			// until it holds as many keys as its primary.
			waitSameKeys(t, p.Server, r.Server)
		}
	}
	var dead *testkit.Server
	counts := func() map[string]int {
		m := map[string]int{}
		for _, n := range topo.Nodes {
			if n.Server != dead {
				m[n.Addr] = getCalls(t, n.Server)
			}
		}
		return m
	}
	// read reads every key twice in a row with c (two consecutive turns of
	// a round robin, whatever the order of the shards) and returns the
	// GETs each node served, per shard: shard ID -> node address -> GETs.
	read := func(c *Client) map[string]map[string]int {
		t.Helper()
		before := counts()
		for _, k := range keys {
			for range 2 {
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				v, err := c.Get(cctx, k)
				cancel()
				if err != nil || string(v) != "v" {
					t.Fatalf("GET %s: %q %v", k, v, err)
				}
			}
		}
		after := counts()
		served := map[string]map[string]int{}
		for _, n := range topo.Nodes {
			if n.Server == dead {
				continue
			}
			shard := n.ID
			if n.Role == testkit.Replica {
				shard = n.PrimaryID
			}
			if served[shard] == nil {
				served[shard] = map[string]int{}
			}
			served[shard][n.Addr] = after[n.Addr] - before[n.Addr]
		}
		return served
	}
	perShard := map[string]int{}
	for _, k := range keys {
		perShard[shardOf[k]] += 2
	}
	// check verifies one client's reads of every shard: none on the
	// primary; with wantOne, all on one replica; otherwise at least a
	// quarter on each live replica. It returns, per shard, the replica
	// that served most.
	check := func(name string, served map[string]map[string]int, wantOne bool) map[string]*testkit.Server {
		t.Helper()
		busiest := map[string]*testkit.Server{}
		for _, p := range topo.Primaries() {
			if n := served[p.ID][p.Addr]; n != 0 {
				t.Errorf("%s: the primary %s served %d GETs", name, p.Addr, n)
			}
			var live []testkit.ClusterNode
			for _, r := range topo.Replicas(p.ID) {
				if r.Server != dead {
					live = append(live, r)
				}
			}
			most := -1
			for _, r := range live {
				n := served[p.ID][r.Addr]
				switch {
				case wantOne && n != 0 && n != perShard[p.ID]:
					t.Errorf("%s: replica %s served %d of its shard's %d GETs, want all or none", name, r.Addr, n, perShard[p.ID])
				case !wantOne && len(live) > 1 && 4*n < perShard[p.ID]:
					t.Errorf("%s: replica %s served %d of its shard's %d GETs, want a share", name, r.Addr, n, perShard[p.ID])
				case len(live) == 1 && n != perShard[p.ID]:
					t.Errorf("%s: the surviving replica %s served %d of its shard's %d GETs", name, r.Addr, n, perShard[p.ID])
				}
				if n > most {
					most, busiest[p.ID] = n, r.Server
				}
			}
		}
		return busiest
	}
	sticky := check("prefer-replica", read(clients[ReadPreferReplica]), true)
	check("round-robin", read(clients[ReadReplicaRoundRobin]), false)
	if t.Failed() {
		return
	}
	// Kill the replica prefer-replica reads one shard from.
	shard := topo.Primaries()[0].ID
	dead = sticky[shard]
	dead.Kill()
	check("prefer-replica, a replica killed", read(clients[ReadPreferReplica]), true)
	check("round-robin, a replica killed", read(clients[ReadReplicaRoundRobin]), false)
}

// Sharded pub/sub on a cluster: each SSUBSCRIBE goes to its slot's owner,
// and follows the slot through a failover and a reshard, reporting a gap
// each time; no channel is ever silently dropped. Classic SUBSCRIBE works
// from any node, and survives its node's failover too.
func TestClusterPubSubFollowsSlots(t *testing.T) {
	c, cl := clusterClient(t, testkit.Redis, Options{})
	ctx := context.Background()
	channels := []string{"news", "prices", "alerts", "orders", "users", "logs"}
	ssub, err := c.SSubscribe(ctx, channels...)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.Subscribe(ctx, "broadcast")
	if err != nil {
		t.Fatal(err)
	}
	// expect publishes round on every channel until each is received (a gap
	// may come first), within 10 s.
	expect := func(stage string) (gaps int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for _, ch := range channels {
			payload := stage + ":" + ch
			got := false
			for !got {
				if time.Now().After(deadline) {
					t.Fatalf("%s: no message on %s: the channel was dropped", stage, ch)
				}
				if _, err := c.Do(ctx, "SPUBLISH", ch, payload); err != nil {
					t.Fatalf("%s: SPUBLISH %s: %v", stage, ch, err)
				}
				rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				for m, err := range ssub.Messages(rctx) {
					if errors.Is(err, ErrGap) {
						gaps++
						continue
					}
					if err != nil {
						break
					}
					if m.Channel == ch && string(m.Payload) == payload {
						got = true
						break
					}
				}
				cancel()
			}
		}
		// The classic channel too is published to in rounds until the
		// message arrives: after the kill of the node that carried it, the
		// subscription is made again on another node, and a message
		// published before that is lost to it, as the server's pub/sub
		// says, not by the client. Within 10 s of its own.
		deadline = time.Now().Add(10 * time.Second)
		for got := false; !got; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no message on the classic channel: the subscription was dropped", stage)
			}
			if _, err := c.Publish(ctx, "broadcast", []byte(stage)); err != nil {
				t.Fatalf("%s: PUBLISH: %v", stage, err)
			}
			rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			for m, err := range sub.Messages(rctx) {
				if err != nil && !errors.Is(err, ErrGap) {
					break
				}
				if err == nil && string(m.Payload) == stage {
					got = true
					break
				}
			}
			cancel()
		}
		return gaps
	}
	expect("start")
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A failover of the owner of the first channel's slot.
	owner, _ := cl.KeyOwner(ctx, channels[0])
	on, _ := topo.Node(owner)
	if _, err := cl.Failover(ctx, topo.Replicas(on.ID)[0].Server); err != nil {
		t.Fatal(err)
	}
	if gaps := expect("after-failover"); gaps == 0 {
		t.Error("the failover moved a channel without reporting a gap")
	}
	// A reshard of 2000 slots away from the node that owns the second channel.
	if topo, err = cl.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	from, _ := cl.KeyOwner(ctx, channels[1])
	var to *testkit.Server
	for _, p := range topo.Primaries() {
		if p.Server != from {
			to = p.Server
			break
		}
	}
	if _, err := cl.Reshard(ctx, from, to, 2000); err != nil {
		t.Fatal(err)
	}
	expect("after-reshard")
	// A kill of the node that carries the classic subscription.
	if topo, err = cl.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	zero, _ := topo.Owner(0)
	if _, err := cl.Kill(ctx, zero.Server); err != nil {
		t.Fatal(err)
	}
	expect("after-kill")
	t.Logf("sharded subscription: %+v; classic: %+v", ssub.Stats(), sub.Stats())
}

// On a cluster too, GET and SET cost at most one allocation (GET's value):
// routing a one-command request allocates nothing. A Batch of 50 SETs and
// 50 GETs over every primary reuses its flight's arrays with the request:
// what it allocates is its Futures (three blocks per result type), the
// node groups, and the goroutines that send to the other nodes.
func TestClusterHotPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c, _ := clusterClient(t, testkit.Redis, Options{})
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = "alloc:" + strconv.Itoa(i)
	}
	checkHotPathAllocations(t, c, allocCase{"Batch of 100 over every primary", 16, func(ctx context.Context, val []byte) {
		b := c.Batch()
		for i, k := range keys {
			if i%2 == 0 {
				b.Set(k, val)
			} else {
				b.Get(k)
			}
		}
		if err := b.Exec(ctx); err != nil {
			t.Error(err)
		}
	}})
}

// MGET and MSET of 100 keys, which live in as many slots and so go out as
// one command per slot, to every primary; and a Batch of 100 commands.
func BenchmarkClusterMultiKey(b *testing.B) {
	c, _ := clusterClient(b, testkit.Redis, Options{})
	ctx := context.Background()
	keys := make([]string, 100)
	pairs := make([]KeyValue, len(keys))
	for i := range keys {
		keys[i] = "mk:" + strconv.Itoa(i)
		pairs[i] = KeyValue{keys[i], []byte("value")}
	}
	b.Run("MSET100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.MSet(ctx, pairs...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MGET100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.MGet(ctx, keys...); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A Batch of 50 SETs and 50 GETs, as bench/cmd/clusterbench's batch.
	b.Run("BATCH100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bt := c.Batch()
			for i, k := range keys {
				if i%2 == 0 {
					bt.Set(k, pairs[i].Value)
				} else {
					bt.Get(k)
				}
			}
			if err := bt.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Every ReadFrom mode serves reads from where it says: ReadPrimary only
// from primaries, the replica modes mostly from replicas, ReadLowestLatency
// from whichever node answered health checks fastest (any of them, here).
// With a replica killed, PreferReplica's reads of its slots still succeed,
// from the primary, within their deadline.
func TestClusterReadFromModes(t *testing.T) {
	for _, mode := range []struct {
		name     string
		from     ReadFrom
		replicas func(onReplicas, onPrimaries int) bool
	}{
		{"primary", ReadPrimary, func(r, p int) bool { return r == 0 && p >= 50 }},
		{"prefer-replica", ReadPreferReplica, func(r, p int) bool { return r >= 40 && p <= 10 }},
		{"round-robin", ReadReplicaRoundRobin, func(r, p int) bool { return r >= 40 && p <= 10 }},
		{"lowest-latency", ReadLowestLatency, func(r, p int) bool { return r+p >= 50 }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			c, cl := clusterClient(t, testkit.Redis, Options{ReadFrom: mode.from})
			ctx := context.Background()
			keys := make([]string, 50)
			for i := range keys {
				keys[i] = "rf:" + strconv.Itoa(i)
				if err := c.Set(ctx, keys[i], []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			topo, err := cl.Settle(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// WAIT on each primary until its replica has acknowledged every
			// write (a replica still in its first sync acknowledges none), and
			// until the replica holds as many keys as its primary: a replica
			// that resynchronises (a loaded machine can make a 1 s node
			// timeout flap) serves its old, empty data meanwhile, and WAIT
			// from a connection that wrote nothing counts it as soon as it is
			// back online. Then a read from a replica never finds Nil.
			for _, p := range topo.Primaries() {
				waitReplicated(t, p.Server, 1)
				for _, r := range topo.Replicas(p.ID) {
					waitSameKeys(t, p.Server, r.Server)
				}
			}
			before := getCallsPerNode(t, topo)
			for _, k := range keys {
				if v, err := c.Get(ctx, k); err != nil || string(v) != "v" {
					t.Fatalf("GET %s: %q %v", k, v, err)
				}
			}
			onReplicas, onPrimaries := getsSince(t, topo, before)
			if !mode.replicas(onReplicas, onPrimaries) {
				t.Fatalf("%d GETs on replicas and %d on primaries", onReplicas, onPrimaries)
			}
			if mode.from != ReadPreferReplica {
				return
			}
			var victim *testkit.Server
			for _, n := range topo.Nodes {
				if n.Role != testkit.Primary {
					victim = n.Server
					break
				}
			}
			victim.Kill()
			for _, k := range keys {
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				v, err := c.Get(cctx, k)
				cancel()
				if err != nil || string(v) != "v" {
					t.Fatalf("GET %s with a replica killed: %q %v", k, v, err)
				}
			}
		})
	}
}

// connectionsReceived is a server's count of accepted connections, the one
// that asks included.
func connectionsReceived(t *testing.T, s *testkit.Server) int {
	t.Helper()
	info, err := s.Info(context.Background(), "stats")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(info["total_connections_received"])
	if err != nil {
		t.Fatalf("total_connections_received %q: %v", info["total_connections_received"], err)
	}
	return n
}

// settledRouter starts a Redis cluster and a Client on it, and returns the
// Client's router and the cluster's settled topology, for tests of the
// router's own mechanisms.
func settledRouter(t *testing.T) (*Client, *cluster, testkit.Topology) {
	t.Helper()
	c, cl := clusterClient(t, testkit.Redis, Options{})
	topo, err := cl.Settle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c, c.s.top.(*cluster), topo
}

// A node nobody is connected to yet (a replica, with ReadPrimary) is
// dialled once however many callers ask for it together, as every caller
// redirected to a newly promoted primary does: the others wait for that
// one connection instead of each making its own (a hundred handshakes held
// a failover's calls up for tens of milliseconds under -race).
func TestClusterNodeDialledOnce(t *testing.T) {
	_, cc, topo := settledRouter(t)
	ctx := context.Background()
	replica := topo.Replicas(topo.Primaries()[0].ID)[0]
	before := connectionsReceived(t, replica.Server)
	const callers = 64
	nodes, errs := make([]*node, callers), make([]error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			nodes[i], errs[i] = cc.node(ctx, replica.Addr)
		}()
	}
	close(start)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || nodes[i] != nodes[0] {
			t.Fatalf("caller %d: %p %v, caller 0: %p", i, nodes[i], errs[i], nodes[0])
		}
	}
	// The second count's own connection is one of them.
	if n := connectionsReceived(t, replica.Server) - before - 1; n != 1 {
		t.Fatalf("%d callers asking for a new node together made %d connections to it, want 1", callers, n)
	}
}

// A MOVED that names the slot's own replica is a failover, which hands the
// replica every slot of its primary: the whole shard is routed to it at
// once, not one slot per MOVED until the next topology query. A MOVED to
// another primary (a resharding) moves its one slot only.
func TestClusterFailoverMovesTheWholeShard(t *testing.T) {
	c, cc, topo := settledRouter(t)
	ctx := context.Background()
	primaries := topo.Primaries()
	p, other := primaries[0], primaries[1]
	replica := topo.Replicas(p.ID)[0]
	// Routes as installed; the topology was just read, so no query of it
	// comes for a second (minQueryInterval) to undo what moved does here.
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	first, last := int32(p.Slots[0].First), int32(p.Slots[len(p.Slots)-1].Last)
	otherSlot := int32(other.Slots[0].First)
	ownerAddr := func(slot int32) string {
		if r := cc.routes[slot].Load(); r != nil && r.primary != nil {
			return r.primary.addr
		}
		return ""
	}
	if ownerAddr(first) != p.Addr || ownerAddr(otherSlot) != other.Addr {
		t.Fatalf("routes before: slot %d on %s, slot %d on %s", first, ownerAddr(first), otherSlot, ownerAddr(otherSlot))
	}
	cc.moved(ctx, first, replica.Addr, nil)
	if ownerAddr(first) != replica.Addr || ownerAddr(last) != replica.Addr {
		t.Fatalf("after a MOVED to the shard's replica: slot %d on %s, slot %d on %s; want both on %s",
			first, ownerAddr(first), last, ownerAddr(last), replica.Addr)
	}
	if ownerAddr(otherSlot) != other.Addr {
		t.Fatalf("another shard's slot %d moved too, to %s", otherSlot, ownerAddr(otherSlot))
	}
	// A resharding's MOVED: the other primary's slot goes to p's replica,
	// which is not its replica: that slot alone.
	otherLast := int32(other.Slots[len(other.Slots)-1].Last)
	cc.moved(ctx, otherSlot, replica.Addr, nil)
	if ownerAddr(otherSlot) != replica.Addr || ownerAddr(otherLast) != other.Addr {
		t.Fatalf("after a MOVED of one slot to another primary: slot %d on %s, slot %d on %s",
			otherSlot, ownerAddr(otherSlot), otherLast, ownerAddr(otherLast))
	}
}

// A shard map read from a node that has not yet heard of a failover (or
// read before it) is not installed over the routes a MOVED from the former
// primary set: that would send the whole shard back to it, each slot to be
// MOVED again, and everything in flight to it would be lost when it
// restarts (a graceful rolling restart failed 5-66 writes in a quarter of
// runs so). A map that forgot the shard's replica (read while it
// restarted) keeps it as standby, so that the failover's MOVED is still
// known for one. Past deniedFor, maps are believed again.
func TestStaleMapDoesNotUndoAFailover(t *testing.T) {
	c, cc, topo := settledRouter(t)
	ctx := context.Background()
	p := topo.Primaries()[0]
	replica := topo.Replicas(p.ID)[0]
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	first, last := int32(p.Slots[0].First), int32(p.Slots[len(p.Slots)-1].Last)
	ownerAddr := func(slot int32) string {
		if r := cc.routes[slot].Load(); r != nil && r.primary != nil {
			return r.primary.addr
		}
		return ""
	}
	// The map as read before the failover, less the shard's replica: what
	// a node that has not heard of the failover answers while it runs.
	cc.mu.Lock()
	stale := &shardMap{}
	for _, sh := range cc.current.shards {
		if sh.primary == p.Addr {
			sh.replicas = nil
		}
		stale.shards = append(stale.shards, sh)
	}
	from := cc.nodes[p.Addr]
	cc.mu.Unlock()
	stale.normalise()
	// A map without the replica keeps it as standby.
	if err := cc.install(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if r := cc.routes[first].Load(); r == nil || !slices.Contains(r.standby, replica.Addr) {
		t.Fatalf("after a map without the replica: standby %v, want it to keep %s", r.standby, replica.Addr)
	}
	// The failover's MOVED, answered by the former primary: the whole
	// shard goes to the replica.
	cc.moved(ctx, first, replica.Addr, from)
	if ownerAddr(first) != replica.Addr || ownerAddr(last) != replica.Addr {
		t.Fatalf("after the failover's MOVED: slots on %s and %s, want %s", ownerAddr(first), ownerAddr(last), replica.Addr)
	}
	// A refresh that elects a map giving the shard to the former primary
	// again leaves the routes alone...
	stale.hash++ // not the map installed: a refresh would install it
	if err := cc.adopt(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if ownerAddr(first) != replica.Addr || ownerAddr(last) != replica.Addr {
		t.Fatalf("a stale map undid the failover: slots on %s and %s, want %s", ownerAddr(first), ownerAddr(last), replica.Addr)
	}
	// ...until the MOVED is older than deniedFor.
	cc.mu.Lock()
	d := cc.denied[p.Addr]
	d.at = d.at.Add(-deniedFor - time.Second)
	cc.denied[p.Addr] = d
	cc.mu.Unlock()
	if err := cc.adopt(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if ownerAddr(first) != p.Addr {
		t.Fatalf("past deniedFor, the map was not installed: slot %d on %s, want %s", first, ownerAddr(first), p.Addr)
	}
	// A MOVED again, and the map held off again, until the node the MOVED
	// named cannot be reached (killed since, restarting): its word is
	// worth nothing then, and the map is let in at once.
	cc.moved(ctx, first, replica.Addr, from)
	stale.hash++
	if err := cc.adopt(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if ownerAddr(first) != replica.Addr {
		t.Fatalf("after a second MOVED a stale map was installed: slot %d on %s, want %s", first, ownerAddr(first), replica.Addr)
	}
	cc.mu.Lock()
	dead := cc.nodes[replica.Addr]
	dead.direct.pipe.Close() // unreachable from now on
	cc.mu.Unlock()
	if err := cc.adopt(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if ownerAddr(first) != p.Addr {
		t.Fatalf("with the node the MOVED named unreachable, the map was not installed: slot %d on %s, want %s", first, ownerAddr(first), p.Addr)
	}
	// A route patched past the installed map (as a MOVED does) to a node
	// that has become unreachable since: a refresh that finds the same
	// map again installs it anew rather than leave the slot on a dead node.
	cc.mu.Lock()
	cc.nodes[replica.Addr] = dead
	cc.routes[first].Store(&route{primary: dead})
	cc.mu.Unlock()
	if err := cc.adopt(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if ownerAddr(first) != p.Addr {
		t.Fatalf("the installed map found again left slot %d on the unreachable %s, want %s", first, ownerAddr(first), p.Addr)
	}
}

// A retry held back because its node could not be reached (or the cluster
// was down) goes at the next change of the routes, long before its
// backoff ends: a failover ends with such a change, and the calls behind
// it must not sleep on (up to 200 ms at the longest backoff). A redirect
// that bounced waits its backoff out whatever changes, so that nodes
// disagreeing about a slot (each MOVED a change) cannot spin a command
// through every round at once.
func TestClusterRetryWait(t *testing.T) {
	c := &cluster{changed: make(chan struct{})}
	c.life, c.stop = context.WithCancel(context.Background())
	defer c.stop()
	change := func() {
		c.mu.Lock()
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
	// waitUnderChanges runs wait while the routes change every
	// millisecond, for at most 3 s, and returns how long it took.
	waitUnderChanges := func(backoff time.Duration, when again) time.Duration {
		type result struct {
			took time.Duration
			err  error
			next time.Duration
		}
		done := make(chan result, 1)
		go func() {
			start := time.Now()
			b := backoff
			err := c.wait(context.Background(), &b, when, -1)
			done <- result{time.Since(start), err, b}
		}()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		timeout := time.After(3 * time.Second)
		for {
			select {
			case r := <-done:
				if r.err != nil {
					t.Fatalf("wait(%v, %d): %v", backoff, when, r.err)
				}
				// A change of the routes starts the backoff again from
				// the shortest; a wait that ran its course doubles it.
				if want := min(2*backoff, retryBackoffMax); when >= againOnChange && r.next != retryBackoffMin ||
					when < againOnChange && r.next != want {
					t.Errorf("wait(%v, %d): next backoff %v", backoff, when, r.next)
				}
				return r.took
			case <-timeout:
				t.Fatalf("wait(%v, %d) did not return within 3 s", backoff, when)
			case <-tick.C:
				change()
			}
		}
	}
	for _, when := range []again{againOnChange, againOnRoutes} {
		if took := waitUnderChanges(20*time.Second, when); took > 2*time.Second {
			t.Errorf("wait(20s, %d) returned after %v, with the routes changing every millisecond", when, took)
		}
	}
	for _, when := range []again{againNow, againLater} {
		if took := waitUnderChanges(100*time.Millisecond, when); took < 50*time.Millisecond {
			t.Errorf("wait(100ms, %d) returned after %v: a change cut the backoff (at least 50 ms) short", when, took)
		}
	}
}

// ReadAZAffinity reads from the replicas in the client's zone: on a Valkey
// cluster with two replicas per shard, one in zone "az-a" and one in
// "az-b" (Valkey's availability-zone, which HELLO reports), a client in
// "az-a" reads every shard from its az-a replica only, and a client in a
// zone with no replica spreads its reads over both replicas, never the
// primary.
func TestClusterReadAZAffinity(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Kind: testkit.Valkey, Replicas: 2})
	ctx := context.Background()
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	zoneOf := map[string]string{}
	for _, p := range topo.Primaries() {
		for i, r := range topo.Replicas(p.ID) {
			zone := []string{"az-a", "az-b"}[i%2]
			if _, err := r.Server.Do(ctx, "CONFIG", "SET", "availability-zone", zone); err != nil {
				t.Fatal(err)
			}
			zoneOf[r.Addr] = zone
		}
		if _, err := p.Server.Do(ctx, "CONFIG", "SET", "availability-zone", "az-a"); err != nil {
			t.Fatal(err) // a primary in the zone is still not read from while a replica there is up
		}
	}
	// The zones are read when the client connects (HELLO), and from the
	// shard map (CLUSTER SHARDS), so it connects once every node there
	// reports its zone.
	seed := cl.Nodes()[0]
	for deadline := time.Now().Add(10 * time.Second); ; {
		v, err := seed.Do(ctx, "CLUSTER", "SHARDS")
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(v.String(), "availability-zone"); n >= len(topo.Nodes) && !strings.Contains(v.String(), "availability-zone \"\"") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLUSTER SHARDS does not report every node's zone:\n%s", v.String())
		}
		time.Sleep(20 * time.Millisecond) // bounded poll of the gossip's progress
	}
	newClient := func(zone string) *Client {
		c, err := New(Options{Addrs: cl.Addrs()[:1], ReadFrom: ReadAZAffinity, AvailabilityZone: zone, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	inA, elsewhere := newClient("az-a"), newClient("az-c")
	// A client connects only to the replicas in its zone; one in a zone
	// without replicas, to all of them.
	connected := func(c *Client) map[string]bool {
		cc := c.s.top.(*cluster)
		cc.mu.Lock()
		defer cc.mu.Unlock()
		out := map[string]bool{}
		for addr := range cc.nodes {
			out[addr] = true
		}
		return out
	}
	for addr, zone := range zoneOf {
		if zone == "az-b" && connected(inA)[addr] {
			t.Errorf("a client in az-a connected to %s, a replica in az-b", addr)
		}
		if !connected(elsewhere)[addr] {
			t.Errorf("a client in a zone without replicas did not connect to the replica %s", addr)
		}
	}
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = "az:" + strconv.Itoa(i)
		if err := inA.Set(ctx, keys[i], []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range topo.Primaries() {
		waitReplicated(t, p.Server, 2)
		for _, r := range topo.Replicas(p.ID) {
			waitSameKeys(t, p.Server, r.Server)
		}
	}
	served := func(c *Client) map[string]int {
		t.Helper()
		before := map[string]int{}
		for _, n := range topo.Nodes {
			before[n.Addr] = getCalls(t, n.Server)
		}
		for _, k := range keys {
			for range 2 {
				if v, err := c.Get(ctx, k); err != nil || string(v) != "v" {
					t.Fatalf("GET %s: %q %v", k, v, err)
				}
			}
		}
		out := map[string]int{}
		for _, n := range topo.Nodes {
			if d := getCalls(t, n.Server) - before[n.Addr]; d > 0 {
				out[n.Addr] = d
			}
		}
		return out
	}
	for addr, n := range served(inA) {
		if zoneOf[addr] != "az-a" {
			t.Errorf("a client in az-a read %d times from %s (zone %q)", n, addr, zoneOf[addr])
		}
	}
	got := served(elsewhere)
	for addr, n := range got {
		if zoneOf[addr] == "" {
			t.Errorf("a client in a zone without replicas read %d times from the primary %s", n, addr)
		}
	}
	if len(got) != 2*len(topo.Primaries()) {
		t.Errorf("a client in a zone without replicas read from %d replicas, want all %d: %v", len(got), 2*len(topo.Primaries()), got)
	}
}
