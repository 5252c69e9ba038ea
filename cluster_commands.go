package zipline

import (
	"strconv"
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// The CLUSTER commands. Each is defined once; go generate makes its Client
// and Batch methods (commands_gen.go). Those about a slot go to the node
// that owns it; the others to whichever node the cluster picks (on a
// single server in cluster mode, to it). Administration that concerns one
// node (CLUSTER MEET, FORGET, REPLICATE, FAILOVER, RESET...) belongs on a
// connection to that node: a Client whose Options.Cluster is ClusterOff,
// addressed to it.

// ClusterInfo returns CLUSTER INFO's fields ("cluster_state", ...).
//
//zipline:twins ClusterInfo
func clusterInfoCmd() command[map[string]string] { return define(decInfo, specCLUSTER_INFO) }

// ClusterNodes returns CLUSTER NODES's text: one line per node.
//
//zipline:twins ClusterNodes
func clusterNodesCmd() command[string] { return define(decString, specCLUSTER_NODES) }

// ClusterMyID returns the ID of the node the command reaches.
//
//zipline:twins ClusterMyID
func clusterMyIDCmd() command[string] { return define(decString, specCLUSTER_MYID) }

// ClusterMyShardID returns the shard ID of the node the command reaches
// (Redis 7.2, Valkey 8.0).
//
//zipline:twins ClusterMyShardID
func clusterMyShardIDCmd() command[string] { return define(decString, specCLUSTER_MYSHARDID) }

// ClusterKeySlot returns the hash slot of key, as the server computes it.
//
//zipline:twins ClusterKeySlot
func clusterKeySlotCmd(key string) command[int64] {
	return define(decInt, specCLUSTER_KEYSLOT, str(key))
}

// ClusterCountKeysInSlot returns how many keys the slot holds, asking its
// owner.
//
//zipline:twins ClusterCountKeysInSlot
func clusterCountKeysInSlotCmd(slot int64) command[int64] {
	return define(decInt, specCLUSTER_COUNTKEYSINSLOT, slotArg(slot))
}

// ClusterGetKeysInSlot returns up to count keys of the slot, asking its
// owner.
//
//zipline:twins ClusterGetKeysInSlot
func clusterGetKeysInSlotCmd(slot, count int64) command[[]string] {
	return define(decStrings, specCLUSTER_GETKEYSINSLOT, slotArg(slot), num(count))
}

// ClusterCountFailureReports returns how many nodes report nodeID as
// failing.
//
//zipline:twins ClusterCountFailureReports
func clusterCountFailureReportsCmd(nodeID string) command[int64] {
	return define(decInt, specCLUSTER_COUNT_FAILURE_REPORTS, str(nodeID))
}

// ClusterReplicas returns the CLUSTER NODES lines of nodeID's replicas.
//
//zipline:twins ClusterReplicas
func clusterReplicasCmd(nodeID string) command[[]string] {
	return define(decStrings, specCLUSTER_REPLICAS, str(nodeID))
}

// ClusterShard is one shard, as CLUSTER SHARDS describes it.
type ClusterShard struct {
	Slots []SlotRange
	Nodes []ClusterNode
}

// SlotRange is the slots Start to End inclusive.
type SlotRange struct{ Start, End int64 }

// ClusterNode is a node of a shard.
type ClusterNode struct {
	ID                string
	Endpoint          string
	IP                string
	Hostname          string
	Port              int64
	TLSPort           int64
	Role              string // "master" or "replica"
	ReplicationOffset int64
	Health            string // "online", "failed" or "loading"
}

// ClusterShards describes the cluster's shards.
//
//zipline:twins ClusterShards
func clusterShardsCmd() command[[]ClusterShard] { return define(decClusterShards, specCLUSTER_SHARDS) }

// ClusterSlot is a range of slots and its nodes, primary first, as
// CLUSTER SLOTS (deprecated for CLUSTER SHARDS) describes them.
type ClusterSlot struct {
	Start, End int64
	Nodes      []ClusterSlotNode
}

// ClusterSlotNode is a node serving a ClusterSlot.
type ClusterSlotNode struct {
	Addr string // host:port
	ID   string
}

// ClusterSlots describes which nodes serve which slots.
//
//zipline:twins ClusterSlots
func clusterSlotsCmd() command[[]ClusterSlot] { return define(decClusterSlots, specCLUSTER_SLOTS) }

// ClusterMeet joins the node at host:port to the cluster of the node the
// command reaches.
//
//zipline:twins ClusterMeet client=error
func clusterMeetCmd(host, port string) command[bool] {
	return define(decOK, specCLUSTER_MEET, str(host), str(port))
}

// ClusterForget removes nodeID from the node's view of the cluster.
//
//zipline:twins ClusterForget client=error
func clusterForgetCmd(nodeID string) command[bool] {
	return define(decOK, specCLUSTER_FORGET, str(nodeID))
}

// ClusterReplicate makes the node a replica of nodeID.
//
//zipline:twins ClusterReplicate client=error
func clusterReplicateCmd(nodeID string) command[bool] {
	return define(decOK, specCLUSTER_REPLICATE, str(nodeID))
}

// ClusterFailover makes the replica the command reaches take over its
// primary's slots; option is "", "FORCE" or "TAKEOVER".
//
//zipline:twins ClusterFailover client=error
func clusterFailoverCmd(option string) command[bool] {
	if option == "" {
		return define(decOK, specCLUSTER_FAILOVER)
	}
	return define(decOK, specCLUSTER_FAILOVER, str(option))
}

// ClusterReset resets the node's cluster state: "SOFT" or "HARD".
//
//zipline:twins ClusterReset client=error
func clusterResetCmd(mode string) command[bool] {
	return define(decOK, specCLUSTER_RESET, str(mode))
}

// ClusterSaveConfig saves the node's cluster configuration to disk.
//
//zipline:twins ClusterSaveConfig client=error
func clusterSaveConfigCmd() command[bool] { return define(decOK, specCLUSTER_SAVECONFIG) }

// ClusterAddSlots assigns slots to the node.
//
//zipline:twins ClusterAddSlots client=error
func clusterAddSlotsCmd(slots ...int64) command[bool] {
	return define(decOK, specCLUSTER_ADDSLOTS, intArgs(slots)...)
}

// ClusterAddSlotsRange assigns the slots start to end to the node.
//
//zipline:twins ClusterAddSlotsRange client=error
func clusterAddSlotsRangeCmd(start, end int64) command[bool] {
	return define(decOK, specCLUSTER_ADDSLOTSRANGE, num(start), num(end))
}

// ClusterDelSlots unassigns slots from the node.
//
//zipline:twins ClusterDelSlots client=error
func clusterDelSlotsCmd(slots ...int64) command[bool] {
	return define(decOK, specCLUSTER_DELSLOTS, intArgs(slots)...)
}

// ClusterDelSlotsRange unassigns the slots start to end from the node.
//
//zipline:twins ClusterDelSlotsRange client=error
func clusterDelSlotsRangeCmd(start, end int64) command[bool] {
	return define(decOK, specCLUSTER_DELSLOTSRANGE, num(start), num(end))
}

func intArgs(ns []int64) []arg {
	args := make([]arg, len(ns))
	for i, n := range ns {
		args[i] = num(n)
	}
	return args
}

var (
	decClusterShards = newDecoder(tsList, func(v resp.Value) ([]ClusterShard, error) {
		return each(v, func(s resp.Value) (ClusterShard, error) {
			m := fieldMap(s)
			var sh ClusterShard
			r := m["slots"].Elems()
			for i := 0; i+1 < len(r); i += 2 {
				sh.Slots = append(sh.Slots, SlotRange{r[i].Int(), r[i+1].Int()})
			}
			nodes, err := each(m["nodes"], func(n resp.Value) (ClusterNode, error) {
				f := fieldMap(n)
				return ClusterNode{ID: string(f["id"].Bytes()), Endpoint: string(f["endpoint"].Bytes()),
					IP: string(f["ip"].Bytes()), Hostname: string(f["hostname"].Bytes()), Port: f["port"].Int(),
					TLSPort: f["tls-port"].Int(), Role: string(f["role"].Bytes()),
					ReplicationOffset: f["replication-offset"].Int(), Health: string(f["health"].Bytes())}, nil
			})
			sh.Nodes = nodes
			return sh, err
		})
	})
	decClusterSlots = newDecoder(tsList, func(v resp.Value) ([]ClusterSlot, error) {
		return each(v, func(s resp.Value) (ClusterSlot, error) {
			e := s.Elems()
			if len(e) < 2 {
				return ClusterSlot{}, &TypeError{Want: "ClusterSlot", Got: s.Type().String()}
			}
			cs := ClusterSlot{Start: e[0].Int(), End: e[1].Int()}
			for _, n := range e[2:] {
				f := n.Elems()
				if len(f) < 2 {
					continue
				}
				node := ClusterSlotNode{Addr: hostPort(string(f[0].Bytes()), f[1].Int())}
				if len(f) > 2 {
					node.ID = string(f[2].Bytes())
				}
				cs.Nodes = append(cs.Nodes, node)
			}
			return cs, nil
		})
	})
)

func hostPort(host string, port int64) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.FormatInt(port, 10)
}

// ClusterLinks describes the node's links to its peers on the cluster bus,
// each as its fields ("dir", "node", "create-time", ...).
//
//zipline:twins ClusterLinks
func clusterLinksCmd() command[[]map[string]string] { return define(decFieldMaps, specCLUSTER_LINKS) }
