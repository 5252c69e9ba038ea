package testbed

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Role is a cluster node's role.
type Role string

// Cluster node roles.
const (
	Primary Role = "primary"
	Replica Role = "replica"
)

// SlotRange is a range of hash slots, both ends included.
type SlotRange struct{ First, Last int }

// Len returns the number of slots in r.
func (r SlotRange) Len() int { return r.Last - r.First + 1 }

func (r SlotRange) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last)
}

// Node is one cluster node as one node's CLUSTER NODES reports it.
type Node struct {
	// Server is the process behind the node; nil for an address this
	// Cluster did not start (which a settled cluster never has).
	Server    *Server
	ID        string
	Addr      string // 127.0.0.1:port
	Role      Role
	PrimaryID string      // a replica's primary; empty for a primary
	Slots     []SlotRange // the slots a primary serves, in order
	// Failed reports that the reporting node flags this one as failing
	// (fail, or pfail: suspected but not yet agreed).
	Failed bool
}

// SlotCount returns how many slots n serves.
func (n Node) SlotCount() int {
	total := 0
	for _, r := range n.Slots {
		total += r.Len()
	}
	return total
}

// Topology is the cluster as one node sees it: every node it knows,
// ordered by address. After a Cluster operation returns, every running
// node sees the same one.
type Topology struct {
	Nodes []Node
}

// Node returns s's entry.
func (t Topology) Node(s *Server) (Node, bool) {
	for _, n := range t.Nodes {
		if n.Server == s && s != nil {
			return n, true
		}
	}
	return Node{}, false
}

// ByID returns the node with the given ID.
func (t Topology) ByID(id string) (Node, bool) {
	for _, n := range t.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// Primaries returns the primaries that serve slots, ordered by their first
// slot.
func (t Topology) Primaries() []Node {
	var ps []Node
	for _, n := range t.Nodes {
		if n.Role == Primary && len(n.Slots) > 0 {
			ps = append(ps, n)
		}
	}
	slices.SortFunc(ps, func(a, b Node) int { return a.Slots[0].First - b.Slots[0].First })
	return ps
}

// Replicas returns the replicas of the primary with the given ID.
func (t Topology) Replicas(primaryID string) []Node {
	var rs []Node
	for _, n := range t.Nodes {
		if n.Role == Replica && n.PrimaryID == primaryID {
			rs = append(rs, n)
		}
	}
	return rs
}

// Owner returns the primary that serves slot.
func (t Topology) Owner(slot int) (Node, bool) {
	for _, n := range t.Nodes {
		if n.Role != Primary {
			continue
		}
		for _, r := range n.Slots {
			if r.First <= slot && slot <= r.Last {
				return n, true
			}
		}
	}
	return Node{}, false
}

// nodesView is one node's CLUSTER NODES, parsed.
type nodesView struct {
	nodes []Node // as reported, Server unset
	self  int    // index of the reporting node ("myself")
	// open lists slots being migrated or imported ("[slot->-id]"), which
	// a settled cluster has none of.
	open []string
	// handshake lists nodes still in handshake or without an address.
	handshake []string
}

// parseClusterNodes parses CLUSTER NODES:
//
//	<id> <ip:port@cport[,hostname[,aux...]]> <flags> <primary|-> <ping-sent> <pong-recv> <epoch> <link> <slot>...
//
// where a slot is "n", "a-b", "[n->-id]" (migrating) or "[n-<-id]"
// (importing).
func parseClusterNodes(text string) (nodesView, error) {
	v := nodesView{self: -1}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 8 {
			return v, fmt.Errorf("testbed: CLUSTER NODES line with %d fields", len(f))
		}
		addr, _, _ := strings.Cut(f[1], "@")
		addr, _, _ = strings.Cut(addr, ",")
		n := Node{ID: f[0], Addr: addr}
		for flag := range strings.SplitSeq(f[2], ",") {
			switch flag {
			case "myself":
				v.self = len(v.nodes)
			case "master":
				n.Role = Primary
			case "slave", "replica":
				n.Role = Replica
			case "fail", "fail?":
				n.Failed = true
			case "handshake", "noaddr":
				v.handshake = append(v.handshake, n.ID+" "+flag)
			}
		}
		if n.Role == Replica && f[3] != "-" {
			n.PrimaryID = f[3]
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				v.open = append(v.open, s)
				continue
			}
			lo, hi, isRange := strings.Cut(s, "-")
			if !isRange {
				hi = lo
			}
			first, err1 := strconv.Atoi(lo)
			last, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || first < 0 || last < first || last >= Slots {
				return v, fmt.Errorf("testbed: CLUSTER NODES slot %q", s)
			}
			n.Slots = append(n.Slots, SlotRange{first, last})
		}
		slices.SortFunc(n.Slots, func(a, b SlotRange) int { return a.First - b.First })
		v.nodes = append(v.nodes, n)
	}
	if v.self < 0 {
		return v, fmt.Errorf("testbed: CLUSTER NODES without a myself line")
	}
	self := v.nodes[v.self].ID
	slices.SortStableFunc(v.nodes, func(a, b Node) int { return strings.Compare(a.Addr, b.Addr) })
	v.self = slices.IndexFunc(v.nodes, func(n Node) bool { return n.ID == self })
	return v, nil
}
