package fanout

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
)

// Each partition's tag hashes to the middle of its share of the slots,
// and the tags differ; n = 16,384 needs a tag for every slot, which also
// shows that the search ends for every smaller n (see partitionTags).
func TestPartitionTagsSitMidShare(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 48, 128, 1000, 16384} {
		start := time.Now()
		p, err := NewPartitions(n, "")
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if p.Len() != n {
			t.Fatalf("n=%d: Len %d", n, p.Len())
		}
		seen := map[string]bool{}
		for i, tag := range p.tags {
			if want := (2*i + 1) * slots / (2 * n); zipline.Slot(tag) != want {
				t.Fatalf("n=%d: partition %d's tag %q is in slot %d, want %d", n, i, tag, zipline.Slot(tag), want)
			}
			if seen[tag] {
				t.Fatalf("n=%d: tag %q twice", n, tag)
			}
			seen[tag] = true
		}
		t.Logf("n=%d: tags in %v, longest %d bytes", n, took, longest(p.tags))
	}
}

func longest(s []string) int {
	m := 0
	for _, x := range s {
		m = max(m, len(x))
	}
	return m
}

// evenSlots splits the slots over primaries as redis-cli --cluster create
// does (clusterManagerNodeArrayAllocate): runs of 16384/primaries slots,
// rounded, the last taking what is left. It returns each primary's first
// slot.
func evenSlots(primaries int) []int {
	per := float64(slots) / float64(primaries)
	firsts := make([]int, primaries)
	first, cursor := 0, 0.0
	for i := range primaries {
		last := int(math.Round(cursor + per - 1))
		if last > slots || i == primaries-1 {
			last = slots - 1
		}
		last = max(last, first)
		firsts[i] = first
		first, cursor = last+1, cursor+per
	}
	return firsts
}

// On a cluster whose slots are spread as redis-cli spreads them, every
// primary owns as many partitions as any other, give or take one: none
// carries more than its share of the hubs' messages.
func TestPartitionsSpreadEvenlyOverPrimaries(t *testing.T) {
	for _, n := range []int{128, 1024, 16384} {
		p, err := NewPartitions(n, "")
		if err != nil {
			t.Fatal(err)
		}
		for primaries := 1; primaries <= 1000; primaries++ {
			firsts := evenSlots(primaries)
			count := make([]int, primaries)
			for _, tag := range p.tags {
				s := zipline.Slot(tag)
				j, found := slices.BinarySearch(firsts, s)
				if !found {
					j-- // in the run of the primary before
				}
				count[j]++
			}
			lo, hi := count[0], count[0]
			for _, c := range count {
				lo, hi = min(lo, c), max(hi, c)
			}
			if hi-lo > 1 {
				t.Fatalf("%d partitions over %d primaries: %d to %d per primary", n, primaries, lo, hi)
			}
		}
	}
}

// A channel's sharded name is in its partition's slot, and maps back to
// the channel; probes and foreign names never pass for channels.
func TestPartitionNames(t *testing.T) {
	p, err := NewPartitions(0, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != DefaultPartitions {
		t.Fatalf("Len %d, want %d", p.Len(), DefaultPartitions)
	}
	for _, ch := range []string{"news", "", "a{b}c", "}", "{", "prices.eur", strings.Repeat("x", 300)} {
		sharded := p.Channel(ch)
		if !strings.HasPrefix(sharded, DefaultPartitionPrefix+"{") {
			t.Errorf("%q: sharded name %q", ch, sharded)
		}
		if got, want := zipline.Slot(sharded), zipline.Slot(p.tags[p.Of(ch)]); got != want {
			t.Errorf("%q: %q is in slot %d, its partition's is %d", ch, sharded, got, want)
		}
		back, ok := p.channelOf(sharded)
		if !ok || back != ch {
			t.Errorf("%q: %q maps back to %q, %v", ch, sharded, back, ok)
		}
		if _, ok := p.probeOf(sharded, "id"); ok {
			t.Errorf("%q: %q passes for a probe", ch, sharded)
		}
	}
	for i := range p.Len() {
		probe := p.probeChannel(i, "a1")
		if zipline.Slot(probe) != zipline.Slot(p.tags[i]) {
			t.Errorf("partition %d's probe %q is not in its slot", i, probe)
		}
		if got, ok := p.probeOf(probe, "a1"); !ok || got != i {
			t.Errorf("probe %q: partition %d, %v", probe, got, ok)
		}
		if _, ok := p.probeOf(probe, "b2"); ok {
			t.Errorf("probe %q passes for another source's", probe)
		}
		if _, ok := p.channelOf(probe); ok {
			t.Errorf("probe %q passes for a channel", probe)
		}
	}
	// A name in the prefix's space but under another partition's tag than
	// its channel's is not one of ours.
	wrong := DefaultPartitionPrefix + "{" + p.tags[(p.Of("news")+1)%p.Len()] + "}news"
	for _, name := range []string{"news", "other:{0}news", DefaultPartitionPrefix + "news", DefaultPartitionPrefix + "{zz", wrong} {
		if ch, ok := p.channelOf(name); ok {
			t.Errorf("%q maps to channel %q", name, ch)
		}
	}

	for _, bad := range []struct {
		n      int
		prefix string
	}{{-1, ""}, {slots + 1, ""}, {8, "a{"}, {8, "}"}} {
		if _, err := NewPartitions(bad.n, bad.prefix); err == nil {
			t.Errorf("NewPartitions(%d, %q): no error", bad.n, bad.prefix)
		}
	}
	q, err := NewPartitions(8, "app/")
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Channel("x"); !strings.HasPrefix(got, "app/{") {
		t.Errorf("prefix app/: %q", got)
	}
}
