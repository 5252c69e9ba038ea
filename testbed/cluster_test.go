package testbed

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestKeySlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"", 0},
		{"123456789", 0x31C3}, // the CRC-16/XMODEM check value
		{"foo", 12182},
		{"bar", 5061},
		{"{user1000}.following", KeySlot("user1000")},
		{"{user1000}.followers", KeySlot("user1000")},
		{"foo{}{bar}", int(crc16("foo{}{bar}") % Slots)}, // empty tag: the whole key
		{"foo{{bar}}zap", KeySlot("{bar")},               // the first '{' opens, the first '}' after it closes
		{"foo{bar}{zap}", KeySlot("bar")},
		{"{}", int(crc16("{}") % Slots)},
		{"}{a}", KeySlot("a")},
	} {
		if got := KeySlot(tc.key); got != tc.want {
			t.Errorf("KeySlot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

func TestParseClusterNodes(t *testing.T) {
	const text = "" +
		"e7d1 127.0.0.1:30002@40002,host-b,shard-id=abc master - 0 1700000000000 2 connected 5461-10922 [5460-<-a1b2]\n" +
		"a1b2 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460 [5460->-e7d1] 16383\n" +
		"c3d4 127.0.0.1:30004@40004 slave a1b2 0 1700000000000 1 connected\n" +
		"f5f6 127.0.0.1:30005@40005 master,fail - 1700000000000 1700000000000 3 disconnected\n" +
		"0a0b 127.0.0.1:30006@40006 slave,fail? f5f6 0 1700000000000 3 connected\n" +
		"9999 :0@0 handshake,noaddr - 0 0 0 disconnected\n"
	v, err := parseClusterNodes(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.nodes[v.self].ID; got != "a1b2" {
		t.Errorf("myself = %s, want a1b2", got)
	}
	if want := []string{"[5460-<-a1b2]", "[5460->-e7d1]"}; !slices.Equal(v.open, want) {
		t.Errorf("open slots %v, want %v", v.open, want)
	}
	if len(v.handshake) != 2 {
		t.Errorf("handshake %v, want the handshake,noaddr node twice", v.handshake)
	}
	topo := Topology{Nodes: v.nodes}
	a, _ := topo.ByID("a1b2")
	if a.Addr != "127.0.0.1:30001" || a.Role != Primary || a.SlotCount() != 5462 ||
		!slices.Equal(a.Slots, []SlotRange{{0, 5460}, {16383, 16383}}) {
		t.Errorf("a1b2 = %+v", a)
	}
	if e, _ := topo.ByID("e7d1"); e.Addr != "127.0.0.1:30002" || e.SlotCount() != 5462 {
		t.Errorf("e7d1 = %+v (hostname and aux fields must not stick to the address)", e)
	}
	if r := topo.Replicas("a1b2"); len(r) != 1 || r[0].ID != "c3d4" || r[0].Failed {
		t.Errorf("replicas of a1b2 = %+v", r)
	}
	if f, _ := topo.ByID("f5f6"); !f.Failed || f.Role != Primary {
		t.Errorf("f5f6 = %+v, want a failed primary", f)
	}
	if f, _ := topo.ByID("0a0b"); !f.Failed || f.PrimaryID != "f5f6" {
		t.Errorf("0a0b = %+v, want a pfail replica of f5f6", f)
	}
	if o, ok := topo.Owner(16383); !ok || o.ID != "a1b2" {
		t.Errorf("Owner(16383) = %+v %v", o, ok)
	}
	if ps := topo.Primaries(); len(ps) != 2 || ps[0].ID != "a1b2" || ps[1].ID != "e7d1" {
		t.Errorf("Primaries() = %+v, want the two with slots, by first slot", ps)
	}
	for _, bad := range []string{"a b c", "a 127.0.0.1:1@2 master - 0 0 1 connected 16384", "a 127.0.0.1:1@2 master - 0 0 1 connected 9-3"} {
		if _, err := parseClusterNodes(bad + "\n"); err == nil {
			t.Errorf("parseClusterNodes(%q) succeeded", bad)
		}
	}
}

// TestCluster runs the operations the client's chaos tests need, on one
// cluster per server kind (each step leaves it settled for the next): it
// is the slowest test of the package, so the two kinds run in parallel.
func TestCluster(t *testing.T) {
	steps := []struct {
		name string
		run  func(*testing.T, *Cluster)
	}{
		{"topology", testTopology},
		{"pause a replica", testPauseReplica},
		{"reshard", testReshard},
		{"manual failover", testManualFailover},
		{"kill and restart a primary", testKillRestart},
		{"shard down", testShardDown},
	}
	for _, kind := range []Kind{Redis, Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			c, err := StartCluster(t.Context(), ClusterConfig{Kind: kind})
			if errors.Is(err, ErrNoBinary) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			t.Logf("3×1 cluster up in %v", time.Since(start).Round(time.Millisecond))
			for _, step := range steps {
				if !t.Run(step.name, func(t *testing.T) { step.run(t, c) }) {
					return // the next steps need the cluster this one left
				}
			}
		})
	}
}

func testTopology(t *testing.T, c *Cluster) {
	ctx := t.Context()
	topo, err := c.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(topo.Nodes))
	}
	ids := map[string]bool{}
	served := 0
	for _, p := range topo.Primaries() {
		served += p.SlotCount()
		if rs := topo.Replicas(p.ID); len(rs) != 1 || rs[0].Server == nil || rs[0].Server == p.Server {
			t.Errorf("primary %s has replicas %+v, want one other node", p.Addr, rs)
		}
	}
	for _, n := range topo.Nodes {
		if n.Server == nil || n.Server != c.Server(n.Addr) || ids[n.ID] || n.Failed {
			t.Errorf("node %+v: want a distinct, healthy node of the cluster", n)
		}
		ids[n.ID] = true
	}
	if len(topo.Primaries()) != 3 || served != Slots {
		t.Fatalf("%d primaries serving %d slots, want 3 serving all", len(topo.Primaries()), served)
	}

	// KeySlot agrees with the server, and KeyOwner with its redirections.
	node := c.Nodes()[0]
	for _, key := range []string{"", "a", "foo", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "\xff\x00binary", strings.Repeat("k", 300)} {
		v, err := node.Do(ctx, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			t.Fatal(err)
		}
		if got := KeySlot(key); int64(got) != v.Int() {
			t.Errorf("KeySlot(%q) = %d, CLUSTER KEYSLOT says %d", key, got, v.Int())
		}
		owner, err := c.KeyOwner(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := owner.Do(ctx, "SET", key, "v"); err != nil {
			t.Errorf("SET %q on its owner %s: %v", key, owner.Addr, err)
		}
		for _, p := range topo.Primaries() {
			if p.Server == owner {
				continue
			}
			_, err := p.Server.Do(ctx, "GET", key)
			if slot, addr, ok := moved(err); !ok || slot != KeySlot(key) || addr != owner.Addr {
				t.Errorf("GET %q on %s: %v, want MOVED %d %s", key, p.Addr, err, KeySlot(key), owner.Addr)
			}
		}
	}
}

func testPauseReplica(t *testing.T, c *Cluster) {
	ctx := t.Context()
	topo, err := c.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	primary := topo.Primaries()[0]
	replica := topo.Replicas(primary.ID)[0].Server
	if err := c.Pause(replica); err != nil {
		t.Fatal(err)
	}
	defer replica.Resume()
	// A paused node is left out: the rest of the cluster is settled.
	if _, err := c.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	key := keysForSlots(primary.Slots[0].First, primary.Slots[0].First+1)[primary.Slots[0].First]
	if _, err := primary.Server.Do(ctx, "SET", key, "written while the replica hung"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx, replica); err != nil {
		t.Fatal(err)
	}
	// Resume waited until the replica was in sync again.
	if v, err := primary.Server.Do(ctx, "WAIT", 1, 5000); err != nil || v.Int() != 1 {
		t.Fatalf("WAIT after Resume: %v %v, want the replica caught up", v, err)
	}
	// AwaitReplicas returns once the replica holds what its primary had
	// taken: 1,000 keys written just before.
	mset := []any{"MSET"}
	for i := range 1000 {
		mset = append(mset, "{"+key+"}:"+strconv.Itoa(i), i)
	}
	if _, err := primary.Server.Do(ctx, mset...); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitReplicas(ctx); err != nil {
		t.Fatal(err)
	}
	pn, err := primary.Server.Do(ctx, "DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	if rn, err := replica.Do(ctx, "DBSIZE"); err != nil || rn.Int() != pn.Int() {
		t.Fatalf("after AwaitReplicas the replica holds %v keys (%v), its primary %d", rn, err, pn.Int())
	}
}

func testReshard(t *testing.T, c *Cluster) {
	ctx := t.Context()
	topo, err := c.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps := topo.Primaries()
	from, to := ps[0], ps[1]
	// Three keys in each of the source's first 150 slots; redis-cli moves
	// the lowest, but the test does not depend on which move.
	slots := from.Slots[0].First + 150
	keys := keysForSlots(from.Slots[0].First, slots)
	count := map[int]int64{} // keys per slot, earlier steps' included
	for slot, tag := range keys {
		if _, err := from.Server.Do(ctx, "MSET", tag+":a", "a", tag+":b", "b", tag+":c", tag); err != nil {
			t.Fatal(err)
		}
		n, err := from.Server.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", slot)
		if err != nil {
			t.Fatal(err)
		}
		count[slot] = n.Int()
	}

	r, err := c.Reshard(ctx, from.Server, to.Server, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resharded %d slots (%d-%d) with 3 keys each in %v", len(r.Slots), r.Slots[0], r.Slots[len(r.Slots)-1], r.Took.Round(time.Millisecond))
	after, err := c.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	movedSlots := 0
	for slot, tag := range keys {
		owner, _ := after.Owner(slot)
		wasMoved := slices.Contains(r.Slots, slot)
		if wasMoved != (owner.ID == to.ID) {
			t.Fatalf("slot %d: owner %s, but moved=%v", slot, owner.Addr, wasMoved)
		}
		// Ask the old owner and follow MOVED by hand, as a client would.
		v, err := from.Server.Do(ctx, "GET", tag+":c")
		if s, addr, ok := moved(err); ok {
			if !wasMoved || s != slot || addr != to.Addr {
				t.Fatalf("GET %s:c on the old owner: %v (slot moved: %v)", tag, err, wasMoved)
			}
			movedSlots++
			v, err = c.Server(addr).Do(ctx, "GET", tag+":c")
		}
		if err != nil || string(v.Bytes()) != tag {
			t.Fatalf("GET %s:c: %q, %v", tag, v.Bytes(), err)
		}
		if n, err := owner.Server.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", slot); err != nil || n.Int() != count[slot] {
			t.Fatalf("slot %d holds %d keys on %s (%v), want %d", slot, n.Int(), owner.Addr, err, count[slot])
		}
	}
	if movedSlots == 0 {
		t.Fatal("no key was in a moved slot")
	}
}

func testManualFailover(t *testing.T, c *Cluster) {
	ctx := t.Context()
	topo, err := c.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	primary := topo.Primaries()[0]
	replica := topo.Replicas(primary.ID)[0]
	key := keysForSlots(primary.Slots[0].First, primary.Slots[0].First+1)[primary.Slots[0].First]
	if _, err := primary.Server.Do(ctx, "SET", key, "before failover"); err != nil {
		t.Fatal(err)
	}
	p, err := c.Failover(ctx, replica.Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("manual failover: promoted after %v, settled after %v", p.Window.Round(time.Millisecond), p.Settled.Round(time.Millisecond))
	if p.Primary != replica.Server || p.Former != primary.Server {
		t.Fatalf("promotion %+v, want %s over %s", p, replica.Addr, primary.Addr)
	}
	// A manual failover loses nothing: the replica caught up first.
	if v, err := replica.Server.Do(ctx, "GET", key); err != nil || string(v.Bytes()) != "before failover" {
		t.Fatalf("GET on the new primary: %q, %v", v.Bytes(), err)
	}
	if _, err := primary.Server.Do(ctx, "GET", key); !isMoved(err, replica.Server.Addr) {
		t.Fatalf("GET on the former primary: %v, want MOVED to %s", err, replica.Addr)
	}
}

func testKillRestart(t *testing.T, c *Cluster) {
	ctx := t.Context()
	topo, err := c.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	primary := topo.Primaries()[1]
	replica := topo.Replicas(primary.ID)[0]
	key := keysForSlots(primary.Slots[0].First, primary.Slots[0].First+1)[primary.Slots[0].First]
	if _, err := primary.Server.Do(ctx, "SET", key, "survives"); err != nil {
		t.Fatal(err)
	}
	if n, err := primary.Server.Do(ctx, "WAIT", 1, 5000); err != nil || n.Int() != 1 {
		t.Fatalf("WAIT: %v %v", n, err)
	}

	p, err := c.Kill(ctx, primary.Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kill with node timeout %v: replica promoted after %v, settled after %v",
		c.NodeTimeout, p.Window.Round(time.Millisecond), p.Settled.Round(time.Millisecond))
	if p.Primary != replica.Server || p.Former != primary.Server {
		t.Fatalf("promotion %+v, want %s over %s", p, replica.Addr, primary.Addr)
	}
	// Nothing suspects a node before the node timeout.
	if p.Window < c.NodeTimeout/2 || p.Window > p.Settled {
		t.Errorf("failover window %v, settled %v, with node timeout %v", p.Window, p.Settled, c.NodeTimeout)
	}
	if v, err := replica.Server.Do(ctx, "GET", key); err != nil || string(v.Bytes()) != "survives" {
		t.Fatalf("GET on the promoted replica: %q, %v", v.Bytes(), err)
	}
	if _, err := c.Kill(ctx, replica.Server); err == nil {
		t.Fatal("Kill of a primary with no running replica was not refused")
	}

	// The killed node comes back from its nodes.conf as a replica of the
	// node that took its slots, and resyncs (Restart waits for that).
	start := time.Now()
	topo, err = c.Restart(ctx, primary.Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted and in sync as a replica after %v", time.Since(start).Round(time.Millisecond))
	if n, _ := topo.Node(primary.Server); n.ID != primary.ID || n.Role != Replica || n.PrimaryID != replica.ID {
		t.Fatalf("restarted node %+v, want %s a replica of %s", n, primary.ID, replica.ID)
	}
	if n, err := primary.Server.Do(ctx, "DBSIZE"); err != nil || n.Int() < 1 {
		t.Fatalf("DBSIZE on the restarted replica: %v %v, want the data back", n, err)
	}
}

func testShardDown(t *testing.T, c *Cluster) {
	ctx := t.Context()
	topo, err := c.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim, other := topo.Primaries()[2], topo.Primaries()[0]
	d, err := c.KillShard(ctx, victim.Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shard down: every node reported cluster_state:fail after %v", d.Took.Round(time.Millisecond))
	if len(d.Nodes) != 2 || d.Nodes[0] != victim.Server || !slices.Equal(d.Slots, victim.Slots) {
		t.Fatalf("shard down %+v, want %s and its replica, slots %v", d, victim.Addr, victim.Slots)
	}
	// Even keys of live shards are refused.
	key := keysForSlots(other.Slots[0].First, other.Slots[0].First+1)[other.Slots[0].First]
	if _, err := other.Server.Do(ctx, "GET", key); err == nil || !strings.Contains(err.Error(), "CLUSTERDOWN") {
		t.Fatalf("GET on a live shard: %v, want CLUSTERDOWN", err)
	}

	start := time.Now()
	topo, err = c.Restart(ctx, d.Nodes...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shard back and cluster ok after %v", time.Since(start).Round(time.Millisecond))
	if n, _ := topo.Node(victim.Server); n.Role != Primary || !slices.Equal(n.Slots, victim.Slots) {
		t.Fatalf("restarted primary %+v, want it serving %v again", n, victim.Slots)
	}
	if _, err := other.Server.Do(ctx, "GET", key); err != nil {
		t.Fatalf("GET after the shard came back: %v", err)
	}
}

// keysForSlots returns a hash tag ("{...}") for each slot in [first, last).
func keysForSlots(first, last int) map[int]string {
	tags := make(map[int]string, last-first)
	for i := 0; len(tags) < last-first && i < 1<<24; i++ {
		tag := "{t" + strconv.Itoa(i) + "}"
		if s := KeySlot(tag); s >= first && s < last && tags[s] == "" {
			tags[s] = tag
		}
	}
	return tags
}

// moved parses a MOVED redirection out of a Server.Do error.
func moved(err error) (slot int, addr string, ok bool) {
	if err == nil {
		return 0, "", false
	}
	var s string
	if _, e := fmt.Sscanf(err.Error(), "testbed: MOVED %d %s", &slot, &s); e != nil {
		return 0, "", false
	}
	return slot, s, true
}

func isMoved(err error, to string) bool {
	_, addr, ok := moved(err)
	return ok && addr == to
}

// A node whose port another server took between the probe and the bind
// must not pass for started because that server answers: startNode moves
// on to another port, and leaves the other server alone.
func TestStartNodeOnATakenPort(t *testing.T) {
	other, err := Start(Config{})
	if errors.Is(err, ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	picks := 0
	pick := func() (int, error) {
		if picks++; picks == 1 {
			return other.Port, nil
		}
		return freePort()
	}
	s, err := startNode(Config{}, pick)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s.Port == other.Port || picks < 2 {
		t.Fatalf("started on %d (%d picks), the taken port was %d", s.Port, picks, other.Port)
	}
	if err := s.checkPID(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := other.checkPID(t.Context()); err != nil {
		t.Fatalf("the other server: %v", err)
	}
}
