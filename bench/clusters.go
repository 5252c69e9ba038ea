package bench

import (
	"context"
	"fmt"
	"slices"
)

// ClusterClient is what every cluster adapter implements: single-key
// commands routed by slot, and the two ways of sending many keys at once
// whose keys lie in many slots. Adapters use each client's own API for a
// job where it has one, and its native pipeline where it has not, so each
// does what its users would write.
type ClusterClient interface {
	Get(ctx context.Context, key string) (int, error) // as Client.Get
	Set(ctx context.Context, key string, val []byte) error
	// MGet reads keys, which hash to many slots, and returns the total
	// length of the values it got back.
	MGet(ctx context.Context, keys []string) (int, error)
	// Batch sends one pipeline of len(keys) commands, in order: SET keys[i]
	// val for even i and GET keys[i] for odd i. It returns the total
	// length of the values read, and the first error of any command.
	Batch(ctx context.Context, keys []string, val []byte) (int, error)
	Close() error
}

// ClusterOp is an operation of the cluster benchmarks.
type ClusterOp string

// The cluster benchmarks' operations. MGet and Batch go through
// ClusterClient.MGet and ClusterClient.Batch with BatchKeys keys.
const (
	OpGet   ClusterOp = "get"
	OpSet   ClusterOp = "set"
	OpMGet  ClusterOp = "mget"
	OpBatch ClusterOp = "batch"
)

// BatchKeys is how many keys an MGET or a Batch carries.
const BatchKeys = 100

// ClusterFactory builds a cluster client from seed addresses.
type ClusterFactory struct {
	Name string
	Desc string // one line: API and options used
	New  func(seeds []string) (ClusterClient, error)
	// Lacks lists operations the client has no API of its own for (a
	// variant that differs from its sibling only for single keys); their
	// cells are left out rather than measured twice.
	Lacks []ClusterOp
	Order int // zipline first, then peers
}

// Does reports whether f's client takes part in op.
func (f ClusterFactory) Does(op ClusterOp) bool { return !slices.Contains(f.Lacks, op) }

func (f ClusterFactory) key() (string, int) { return f.Name, f.Order }

var clusterRegistry = adapters[ClusterFactory]{}

// RegisterCluster adds f; the cluster adapters call it from init.
func RegisterCluster(f ClusterFactory) { clusterRegistry.add(f) }

// LookupCluster returns the cluster factory called name.
func LookupCluster(name string) (ClusterFactory, bool) {
	f, ok := clusterRegistry[name]
	return f, ok
}

// AllCluster returns every registered cluster factory, zipline first.
func AllCluster() []ClusterFactory { return clusterRegistry.all() }

// ClusterNames lists the registered cluster client names in AllCluster
// order.
func ClusterNames() string { return clusterRegistry.names() }

// PickCluster returns the cluster factories a -clients flag names: a
// comma-separated list, or every one for "" and "all".
func PickCluster(list string) ([]ClusterFactory, error) { return clusterRegistry.pick(list) }

// batchTotal adds up the results of a Batch's n commands, where get(i)
// returns the length read by GET i (odd i) and set(i) the error of SET i
// (even i); it stops at the first error.
func batchTotal(n int, set func(i int) error, get func(i int) (int, error)) (int, error) {
	total := 0
	for i := range n {
		if i%2 == 0 {
			if err := set(i); err != nil {
				return total, fmt.Errorf("batch command %d (SET): %w", i, err)
			}
			continue
		}
		l, err := get(i)
		if err != nil {
			return total, fmt.Errorf("batch command %d (GET): %w", i, err)
		}
		total += l
	}
	return total, nil
}
