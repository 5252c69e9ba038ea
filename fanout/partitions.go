package fanout

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ziplinekv/zipline"
)

// DefaultPartitions is the number of partitions NewPartitions makes when
// asked for 0: enough to spread over the nodes of most clusters, few
// enough that a hub probes them all cheaply.
const DefaultPartitions = 128

// DefaultPartitionPrefix begins the sharded channel names of Partitions
// made with an empty prefix.
const DefaultPartitionPrefix = "fanout:"

// slots is the number of hash slots of a Redis or Valkey Cluster.
const slots = 16384

// Partitions maps a hub's channels onto sharded pub/sub channels
// (SPUBLISH, SSUBSCRIBE: Redis and Valkey 7+) spread evenly over a
// cluster's nodes. A channel belongs to one of n partitions, and its
// sharded name carries that partition's hash tag:
//
//	channel "news" → partition FNV-1a-32("news") mod n → "fanout:{" + tag + "}news"
//
// Each partition's tag is chosen to hash to the middle of its own share
// of the 16,384 slots (partition i: slots i×16384/n up to (i+1)×16384/n), so
// on a cluster whose slots are spread evenly over its primaries, as
// `--cluster create` spreads them, each primary owns n/primaries
// partitions, give or take one, and carries its share of the messages.
// The tags depend on n alone: every hub and publisher that uses the same n
// and prefix agrees on every name without asking the cluster.
//
// A Partitions is immutable and safe for concurrent use.
type Partitions struct {
	prefix string
	tags   []string       // by partition
	index  map[string]int // partition by tag
}

// NewPartitions returns n partitions (0: DefaultPartitions; at most
// 16,384, one per slot) whose sharded channel names begin with prefix
// ("": DefaultPartitionPrefix). The prefix may not hold '{' or '}': the
// hash tag must be the name's first.
func NewPartitions(n int, prefix string) (*Partitions, error) {
	if n == 0 {
		n = DefaultPartitions
	}
	if n < 0 || n > slots {
		return nil, fmt.Errorf("fanout: %d partitions: want 1 to %d", n, slots)
	}
	if prefix == "" {
		prefix = DefaultPartitionPrefix
	}
	if strings.ContainsAny(prefix, "{}") {
		return nil, fmt.Errorf("fanout: partition prefix %q holds a brace; the partition's hash tag must come first", prefix)
	}
	p := &Partitions{prefix: prefix, tags: partitionTags(n), index: make(map[string]int, n)}
	for i, t := range p.tags {
		p.index[t] = i
	}
	return p, nil
}

// partitionTags gives partition i the first tag, counting in base 36
// from "0", whose slot is the middle of the partition's share of the
// slots: (2i+1)×16384/(2n). The partitions' slots are then as evenly
// spaced as whole slots allow, so any run of slots a node owns holds as
// many partitions as its length says, give or take one. The candidates'
// slots cover all 16,384 after a finite run (the test of n = 16,384 finds
// it), so the loop ends for every n up to 16,384.
func partitionTags(n int) []string {
	want := make(map[int]int, n) // partition by slot
	for i := range n {
		want[(2*i+1)*slots/(2*n)] = i
	}
	tags := make([]string, n)
	for k, left := uint64(0), n; left > 0; k++ {
		tag := strconv.FormatUint(k, 36)
		if i, ok := want[zipline.Slot(tag)]; ok && tags[i] == "" {
			tags[i] = tag
			left--
		}
	}
	return tags
}

// Len is the number of partitions.
func (p *Partitions) Len() int { return len(p.tags) }

// Of returns the partition of channel: FNV-1a (32 bits) of its name,
// modulo the number of partitions. Part of the naming: it does not change.
func (p *Partitions) Of(channel string) int {
	h := uint32(2166136261) // FNV-1a's offset basis
	for i := 0; i < len(channel); i++ {
		h = (h ^ uint32(channel[i])) * 16777619
	}
	return int(h % uint32(len(p.tags)))
}

// Channel returns the sharded channel that carries channel.
func (p *Partitions) Channel(channel string) string {
	return p.prefix + "{" + p.tags[p.Of(channel)] + "}" + channel
}

// Publish publishes payload on channel's sharded channel through c
// (SPUBLISH), and returns the number of subscribers that received it on
// the node that owns it: the hubs following the channel.
func (p *Partitions) Publish(ctx context.Context, c *zipline.Client, channel string, payload []byte) (int64, error) {
	return c.SPublish(ctx, p.Channel(channel), payload)
}

// channelOf returns the channel that sharded carries, if sharded is one of
// these partitions' names.
func (p *Partitions) channelOf(sharded string) (string, bool) {
	rest, ok := strings.CutPrefix(sharded, p.prefix+"{")
	if !ok {
		return "", false
	}
	tag, channel, ok := strings.Cut(rest, "}")
	if !ok {
		return "", false
	}
	if i, known := p.index[tag]; !known || p.Of(channel) != i {
		return "", false
	}
	return channel, true
}

// probeChannel is the sharded channel on which the source named id probes
// partition i: in the partition's slot, so on the node and connection that
// carry its channels, and under a prefix no channel's name has.
func (p *Partitions) probeChannel(i int, id string) string {
	return p.prefix + "probe{" + p.tags[i] + "}" + id
}

// probeOf returns the partition that sharded probes for the source named
// id.
func (p *Partitions) probeOf(sharded, id string) (int, bool) {
	rest, ok := strings.CutPrefix(sharded, p.prefix+"probe{")
	if !ok {
		return 0, false
	}
	tag, owner, ok := strings.Cut(rest, "}")
	if !ok || owner != id {
		return 0, false
	}
	i, known := p.index[tag]
	return i, known
}
