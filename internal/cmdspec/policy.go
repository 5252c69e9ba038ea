package cmdspec

import (
	"fmt"
	"strings"
)

// RequestPolicy is where a cluster client sends a command, as the servers
// say in its request_policy tip (COMMAND INFO). The zero policy is the
// default: by the command's keys, or to any one node for a keyless one.
type RequestPolicy uint8

// Request policies.
const (
	RequestDefault RequestPolicy = iota
	// AllShards: to every primary (DBSIZE, FLUSHALL, KEYS).
	AllShards
	// AllNodes: to every node, replicas too (CONFIG SET, SCRIPT LOAD).
	AllNodes
	// MultiShard: split by the keys' slots, each part to its shard (MGET,
	// DEL, MSET).
	MultiShard
	// RequestSpecial: the client must know the command (SCAN).
	RequestSpecial
)

// ResponsePolicy is how a cluster client merges the replies of a command
// it sent to several nodes, as the servers say in its response_policy
// tip. The zero policy is the default: a keyless command's arrays are
// concatenated (KEYS), a multi-key command's replies put back in the keys'
// order (MGET).
type ResponsePolicy uint8

// Response policies.
const (
	ResponseDefault ResponsePolicy = iota
	// OneSucceeded: the first success; an error only if every node failed
	// (SCRIPT KILL).
	OneSucceeded
	// AllSucceeded: an error if any node failed, else any node's reply
	// (FLUSHALL, CONFIG SET).
	AllSucceeded
	// AggLogicalAnd and AggLogicalOr: integers, or arrays of them element
	// by element, as booleans (SCRIPT EXISTS).
	AggLogicalAnd
	AggLogicalOr
	// AggMin, AggMax and AggSum: integers, or arrays of them element by
	// element (WAIT, DBSIZE, DEL).
	AggMin
	AggMax
	AggSum
	// ResponseSpecial: the client must know the command (INFO, RANDOMKEY).
	ResponseSpecial
)

var (
	requestNames  = [...]string{"", "all_shards", "all_nodes", "multi_shard", "special"}
	responseNames = [...]string{"", "one_succeeded", "all_succeeded", "agg_logical_and", "agg_logical_or",
		"agg_min", "agg_max", "agg_sum", "special"}
)

func (p RequestPolicy) String() string  { return requestNames[p] }
func (p ResponsePolicy) String() string { return responseNames[p] }

// MarshalText names a request policy as the servers' tip does.
func (p RequestPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a request policy.
func (p *RequestPolicy) UnmarshalText(b []byte) error { return lookupPolicy(p, requestNames[:], b) }

// MarshalText names a response policy as the servers' tip does.
func (p ResponsePolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a response policy.
func (p *ResponsePolicy) UnmarshalText(b []byte) error { return lookupPolicy(p, responseNames[:], b) }

func lookupPolicy[P ~uint8](p *P, names []string, b []byte) error {
	for i, n := range names {
		if n == strings.ToLower(string(b)) {
			*p = P(i)
			return nil
		}
	}
	return fmt.Errorf("cmdspec: policy %q", b)
}

// readTips sets c's policies from COMMAND INFO's tips ("request_policy:
// all_shards", "response_policy:agg_sum"). Other tips are ignored, and so
// is a policy this package does not know (a newer server's): the command
// is then routed by default, as by a client that predates the tip, where
// failing would refuse the server's whole command table.
func (c *Command) readTips(tips []string) {
	for _, t := range tips {
		kind, name, _ := strings.Cut(strings.ToLower(t), ":")
		switch kind {
		case "request_policy":
			if c.Request.UnmarshalText([]byte(name)) != nil {
				c.Request = RequestDefault
			}
		case "response_policy":
			if c.Response.UnmarshalText([]byte(name)) != nil {
				c.Response = ResponseDefault
			}
		}
	}
}
