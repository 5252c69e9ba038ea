package zipline

// This file reads a node's account of a cluster (CLUSTER SHARDS, or
// CLUSTER SLOTS on servers before 7) into a shardMap, and elects the one
// most nodes agree on.

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// A shardMap is one node's account of the cluster: which shard serves which
// slots. The router installs a shard map only when several nodes agree on it.
type shardMap struct {
	shards []mapShard
	// zones are the availability zones the nodes report (Valkey 9.1's
	// CLUSTER SHARDS), by address; nil when none does.
	zones map[string]string
	hash  uint64 // of the normalised view: equal views have equal hashes
}

// mapShard is one shard: its slot ranges, its primary and its healthy
// replicas.
type mapShard struct {
	ranges   [][2]int32
	primary  string
	replicas []string
}

// owner returns the address of slot's primary in the map, or "".
func (m *shardMap) owner(slot int32) string {
	for _, s := range m.shards {
		for _, rg := range s.ranges {
			if rg[0] <= slot && slot <= rg[1] {
				return s.primary
			}
		}
	}
	return ""
}

// parseShards reads CLUSTER SHARDS (Redis and Valkey 7+). Failed nodes are
// left out: a failed primary leaves its slots without an owner, which is
// what they are until a replica takes over. A replica "loading" stays: the
// server says so of every replica whose replication offset it has not yet
// heard, which on a cluster without writes is all of them; a replica that
// really is loading answers LOADING, and the read goes to the primary.
func parseShards(v resp.Value, seed string) (*shardMap, error) {
	shards, err := Value{v}.AsSlice()
	if err != nil {
		return nil, err
	}
	out := &shardMap{shards: make([]mapShard, 0, len(shards))}
	for _, sh := range shards {
		var s mapShard
		var slots, nodes []resp.Value
		err := eachField(sh.v, func(k []byte, f resp.Value) {
			switch string(k) {
			case "slots":
				slots = f.Elems()
			case "nodes":
				nodes = f.Elems()
			}
		})
		if err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(slots); i += 2 {
			lo, err1 := Value{slots[i]}.AsInt64()
			hi, err2 := Value{slots[i+1]}.AsInt64()
			if err1 != nil || err2 != nil || lo < 0 || hi >= slotCount || lo > hi {
				return nil, errors.New("zipline: CLUSTER SHARDS: bad slot range")
			}
			s.ranges = append(s.ranges, [2]int32{int32(lo), int32(hi)})
		}
		for _, n := range nodes {
			var nf shardNode
			if err := eachField(n, nf.set); err != nil {
				return nil, err
			}
			primary := isPrimaryRole(string(nf.role))
			if string(nf.health) == "fail" || string(nf.health) == "failed" || primary && string(nf.health) != "online" {
				continue
			}
			addr := nf.addr(seed)
			if addr == "" {
				continue
			}
			if primary {
				s.primary = addr
			} else {
				s.replicas = append(s.replicas, addr)
			}
			if len(nf.zone) > 0 {
				if out.zones == nil {
					out.zones = map[string]string{}
				}
				out.zones[addr] = string(nf.zone)
			}
		}
		if len(s.ranges) > 0 {
			out.shards = append(out.shards, s)
		}
	}
	out.normalise()
	return out, nil
}

// eachField calls fn with each key and value of a map (RESP3) or of a
// flat array of pairs (RESP2), without making a Go map of it: at a
// thousand nodes a refresh reads thousands of them.
func eachField(v resp.Value, fn func(key []byte, val resp.Value)) error {
	switch v.Type() {
	case resp.Map, resp.Array:
	default:
		return Value{v}.check("map")
	}
	e := v.Elems()
	if len(e)%2 != 0 {
		return &TypeError{Want: "map", Got: "array of odd length"}
	}
	for i := 0; i < len(e); i += 2 {
		fn(e[i].Bytes(), e[i+1])
	}
	return nil
}

// shardNode is what parseShards reads of one node in CLUSTER SHARDS.
type shardNode struct {
	role, health, endpoint, ip, zone []byte
	port, tlsPort                    int64
}

func (n *shardNode) set(k []byte, v resp.Value) {
	switch string(k) {
	case "role":
		n.role = v.Bytes()
	case "health":
		n.health = v.Bytes()
	case "endpoint":
		n.endpoint = v.Bytes()
	case "ip":
		n.ip = v.Bytes()
	case "port":
		n.port, _ = Value{v}.AsInt64()
	case "tls-port":
		n.tlsPort, _ = Value{v}.AsInt64()
	case "availability-zone":
		n.zone = v.Bytes()
	}
}

// addr is the node's address: its endpoint (or IP) and port. An unknown
// endpoint ("?" or empty) means the node we asked, as the specification
// says.
func (n *shardNode) addr(seed string) string {
	host := string(n.endpoint)
	if host == "" || host == "?" {
		host = string(n.ip)
	}
	if host == "" || host == "?" {
		host, _, _ = net.SplitHostPort(seed)
	}
	port := n.port
	if port <= 0 {
		if port = n.tlsPort; port <= 0 {
			return ""
		}
	}
	return net.JoinHostPort(host, strconv.FormatInt(port, 10))
}

// parseSlots reads CLUSTER SLOTS, for servers older than 7: per range, the
// primary then the replicas, each [ip, port, id...].
func parseSlots(v resp.Value, seed string) (*shardMap, error) {
	ranges, err := Value{v}.AsSlice()
	if err != nil {
		return nil, err
	}
	byPrimary := map[string]*mapShard{}
	var order []string
	for _, r := range ranges {
		e, _ := r.AsSlice()
		if len(e) < 3 {
			return nil, errors.New("zipline: CLUSTER SLOTS: short entry")
		}
		lo, err1 := e[0].AsInt64()
		hi, err2 := e[1].AsInt64()
		if err1 != nil || err2 != nil || lo < 0 || hi >= slotCount || lo > hi {
			return nil, errors.New("zipline: CLUSTER SLOTS: bad slot range")
		}
		var addrs []string
		for _, n := range e[2:] {
			ne, _ := n.AsSlice()
			if len(ne) < 2 {
				continue
			}
			host, _ := ne[0].AsString()
			if host == "" || host == "?" {
				host, _, _ = net.SplitHostPort(seed)
			}
			port, _ := ne[1].AsInt64()
			addrs = append(addrs, net.JoinHostPort(host, strconv.FormatInt(port, 10)))
		}
		if len(addrs) == 0 {
			continue
		}
		s := byPrimary[addrs[0]]
		if s == nil {
			s = &mapShard{primary: addrs[0], replicas: addrs[1:]}
			byPrimary[addrs[0]] = s
			order = append(order, addrs[0])
		}
		s.ranges = append(s.ranges, [2]int32{int32(lo), int32(hi)})
	}
	out := &shardMap{}
	for _, p := range order {
		out.shards = append(out.shards, *byPrimary[p])
	}
	out.normalise()
	return out, nil
}

// normalise sorts the shard map and hashes it, so that two nodes' accounts of
// the same cluster compare equal.
func (v *shardMap) normalise() {
	for i := range v.shards {
		s := &v.shards[i]
		slices.SortFunc(s.ranges, func(a, b [2]int32) int { return cmp.Compare(a[0], b[0]) })
		slices.Sort(s.replicas)
	}
	slices.SortFunc(v.shards, func(a, b mapShard) int { return cmp.Compare(a.ranges[0][0], b.ranges[0][0]) })
	h := fnv.New64a()
	for _, s := range v.shards {
		fmt.Fprintf(h, "%v %s %s;", s.ranges, s.primary, strings.Join(s.replicas, ","))
	}
	for _, addr := range slices.Sorted(maps.Keys(v.zones)) {
		fmt.Fprintf(h, "%s@%s;", addr, v.zones[addr])
	}
	v.hash = h.Sum64()
}

// covered counts the slots the shard map assigns to a primary.
func (v *shardMap) covered() int {
	n := 0
	for _, s := range v.shards {
		if s.primary == "" {
			continue
		}
		for _, r := range s.ranges {
			n += int(r[1]-r[0]) + 1
		}
	}
	return n
}

// elect picks the shard map most nodes gave. On a tie it keeps the current one
// if it is among the best, so that a shard map mid-change does not flap; then
// the one covering most slots.
func elect(views []*shardMap, current uint64) *shardMap {
	votes := map[uint64]int{}
	byHash := map[uint64]*shardMap{}
	for _, v := range views {
		votes[v.hash]++
		byHash[v.hash] = v
	}
	var best *shardMap
	for h, v := range byHash {
		switch {
		case best == nil, votes[h] > votes[best.hash]:
			best = v
		case votes[h] < votes[best.hash]:
		case h == current:
			best = v
		case best.hash != current && v.covered() > best.covered():
			best = v
		}
	}
	return best
}
