package fanout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"iter"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
)

// DefaultProbeInterval is how often a ShardedSource probes each partition
// it follows, unless ShardedOptions says otherwise.
const DefaultProbeInterval = 10 * time.Second

// ShardedOptions configure a ShardedSource. The zero value is the
// defaults.
type ShardedOptions struct {
	// ProbeInterval is how often the source checks each partition it
	// follows: it publishes a probe on the partition's slot, through the
	// Client's commands, and expects it, or any message of the partition,
	// back through its subscription. A partition that has delivered
	// nothing since its last probe was published is subscribed again, and
	// a gap reported. That finds a subscription
	// lost without an error, which no PING can: a server that dropped it,
	// a proxy that reconnected behind the client's back. It is found
	// within two intervals. Default DefaultProbeInterval; negative: no
	// probes.
	ProbeInterval time.Duration
	// Logger receives a warning for each partition found lost. Default
	// slog.Default().
	Logger *slog.Logger
}

// ShardedSource is a Source of sharded pub/sub messages (SSUBSCRIBE) on
// a Redis or Valkey Cluster, or a single server, carried by a zipline
// Client: each channel is followed on its partition's sharded channel
// (see Partitions), so a hub holds one subscriber connection per node
// that owns partitions it follows, and publishers reach it with
// Partitions.Publish. The Client re-subscribes after a reconnect, a
// failover or a slot's move, grouped in one command per node, and
// reports the gap; the source's probes (ShardedOptions.ProbeInterval)
// catch what is lost without an error.
//
// Several hubs fed by one cluster each run a ShardedSource with the same
// Partitions: a message reaches every hub that follows its channel.
type ShardedSource struct {
	c        *zipline.Client
	p        *Partitions
	sub      *zipline.Subscription
	id       string // names this source's probe channels
	interval time.Duration
	log      *slog.Logger

	// changing serialises subscription changes (Add, Remove, and a
	// lost partition's renewal), so that the records below follow the
	// order the subscription saw them in.
	changing sync.Mutex
	mu       sync.Mutex
	parts    map[int]*partition // the partitions followed
	gap      atomic.Bool        // a partition was renewed: a gap goes before the next message

	probes, lost atomic.Uint64
	stop         context.CancelFunc
	done         chan struct{}
}

// partition is what a source follows of one partition.
type partition struct {
	channels map[string]bool
	// Probe tokens: the last one handed out, the last one published
	// successfully, and the highest that came back.
	next, sent, seen uint64
}

var _ Source = (*ShardedSource)(nil)

// ShardedStats count a ShardedSource's probes.
type ShardedStats struct {
	Partitions int    // partitions followed now
	Probes     uint64 // probes published
	Lost       uint64 // partitions found lost by a probe, and subscribed again
}

// NewShardedSource returns a source subscribed to nothing yet, on the
// channels of p (nil: NewPartitions(0, "")). Relay adds channels as
// clients ask for them.
func NewShardedSource(ctx context.Context, c *zipline.Client, p *Partitions, opts ShardedOptions) (*ShardedSource, error) {
	if p == nil {
		var err error
		if p, err = NewPartitions(0, ""); err != nil {
			return nil, err
		}
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = DefaultProbeInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sub, err := c.SSubscribe(ctx)
	if err != nil {
		return nil, err
	}
	var id [8]byte
	rand.Read(id[:])
	s := &ShardedSource{c: c, p: p, sub: sub, id: hex.EncodeToString(id[:]), interval: opts.ProbeInterval,
		log: opts.Logger, parts: map[int]*partition{}, done: make(chan struct{})}
	probeCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	if s.interval > 0 {
		go s.probeLoop(probeCtx)
	} else {
		close(s.done)
	}
	return s, nil
}

// Partitions returns the partitions the source follows channels on.
func (s *ShardedSource) Partitions() *Partitions { return s.p }

// Add subscribes to channels, each on its partition's sharded channel, and
// to the probe channel of each partition it starts to follow.
func (s *ShardedSource) Add(ctx context.Context, channels ...string) error {
	s.changing.Lock()
	defer s.changing.Unlock()
	var names []string
	starting := map[int]bool{} // partitions this Add starts to follow
	s.mu.Lock()
	for _, ch := range channels {
		i := s.p.Of(ch)
		if s.parts[i] == nil && !starting[i] {
			starting[i] = true
			names = append(names, s.p.probeChannel(i, s.id))
		}
		names = append(names, s.p.Channel(ch))
	}
	s.mu.Unlock()
	if err := s.sub.Add(ctx, names...); err != nil {
		return err // none subscribed: the records stay as they were
	}
	s.mu.Lock()
	for _, ch := range channels {
		i := s.p.Of(ch)
		part := s.parts[i]
		if part == nil {
			part = &partition{channels: map[string]bool{}}
			s.parts[i] = part
		}
		part.channels[ch] = true
	}
	s.mu.Unlock()
	return nil
}

// Remove unsubscribes from channels, and from the probe channel of each
// partition it stops following.
func (s *ShardedSource) Remove(ctx context.Context, channels ...string) error {
	s.changing.Lock()
	defer s.changing.Unlock()
	var names []string
	s.mu.Lock()
	for _, ch := range channels {
		i := s.p.Of(ch)
		part := s.parts[i]
		if part == nil || !part.channels[ch] {
			continue
		}
		delete(part.channels, ch)
		names = append(names, s.p.Channel(ch))
		if len(part.channels) == 0 {
			delete(s.parts, i)
			names = append(names, s.p.probeChannel(i, s.id))
		}
	}
	s.mu.Unlock()
	// The subscription drops the names whether or not the server answers:
	// the records above follow it.
	return s.sub.Remove(ctx, names...)
}

// Messages yields the channels' messages, by the names the hub knows them
// by, until ctx ends or the source is closed. A gap arrives as a Message
// whose Gap is set: after a reconnect, a move, or a partition's renewal.
// Probes are taken here and not yielded.
func (s *ShardedSource) Messages(ctx context.Context) iter.Seq2[Message, error] {
	renewed := func(yield func(Message, error) bool) bool {
		return !s.gap.Swap(false) || yield(Message{Gap: true}, nil)
	}
	return relayed(ctx, s.sub, renewed, func(m zipline.Message) (Message, bool) {
		if i, ok := s.p.probeOf(m.Channel, s.id); ok {
			s.probed(i, m.Payload)
			return Message{}, false
		}
		ch, ok := s.p.channelOf(m.Channel)
		if !ok {
			return Message{}, false
		}
		s.heard(s.p.Of(ch))
		return Message{Channel: ch, Payload: m.Payload}, true
	})
}

// heard records a message of partition i: as good as its probes coming
// back, since a subscription lost without an error delivers nothing. Under
// load a probe can be dropped with other messages by a full buffer (a gap
// is reported for those); a partition that still delivers is not lost.
func (s *ShardedSource) heard(i int) {
	s.mu.Lock()
	if part := s.parts[i]; part != nil && part.seen < part.sent {
		part.seen = part.sent
	}
	s.mu.Unlock()
}

// probed records that partition i's probe came back.
func (s *ShardedSource) probed(i int, payload []byte) {
	token, err := strconv.ParseUint(string(payload), 10, 64)
	if err != nil {
		return
	}
	s.mu.Lock()
	if part := s.parts[i]; part != nil && token > part.seen {
		part.seen = token
	}
	s.mu.Unlock()
}

// probeLoop checks every partition followed once per interval, until
// ctx ends.
func (s *ShardedSource) probeLoop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.check(ctx)
	}
}

// check renews each partition whose last probe has not come back, then
// publishes the next probe on every partition followed.
func (s *ShardedSource) check(ctx context.Context) {
	s.mu.Lock()
	var lost []int
	for i, part := range s.parts {
		if part.sent > part.seen {
			lost = append(lost, i)
		}
	}
	s.mu.Unlock()
	if len(lost) > 0 {
		s.renew(ctx, lost)
	}

	ctx, cancel := context.WithTimeout(ctx, s.interval)
	defer cancel()
	type probe struct {
		partition int
		token     uint64
	}
	var probes []probe
	s.mu.Lock()
	for i, part := range s.parts {
		part.next++
		probes = append(probes, probe{i, part.next})
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range probes {
		wg.Go(func() {
			// Published through the Client's commands, implicitly
			// pipelined: one round trip per node for all its partitions.
			_, err := s.c.SPublish(ctx, s.p.probeChannel(pr.partition, s.id), strconv.AppendUint(nil, pr.token, 10))
			if err != nil {
				return // the node is away: nothing to expect back
			}
			s.probes.Add(1)
			s.mu.Lock()
			if part := s.parts[pr.partition]; part != nil && pr.token > part.sent {
				part.sent = pr.token
			}
			s.mu.Unlock()
		})
	}
	wg.Wait()
}

// renew subscribes the partitions in lost again, channels and probe, in
// one change: the Client groups the commands by node.
func (s *ShardedSource) renew(ctx context.Context, lost []int) {
	s.changing.Lock()
	defer s.changing.Unlock()
	var names []string
	renewed := 0
	s.mu.Lock()
	for _, i := range lost {
		part := s.parts[i]
		if part == nil || part.sent <= part.seen {
			continue // no longer followed, or its probe came back since
		}
		renewed++
		names = append(names, s.p.probeChannel(i, s.id))
		for ch := range part.channels {
			names = append(names, s.p.Channel(ch))
		}
		// The probes already out do not count against the renewed
		// subscription.
		part.seen = part.sent
	}
	s.mu.Unlock()
	if len(names) == 0 {
		return
	}
	s.lost.Add(uint64(renewed))
	s.gap.Store(true)
	s.log.Warn("fanout: sharded partitions lost their subscription without an error; subscribing again",
		"partitions", renewed)
	ctx, cancel := context.WithTimeout(ctx, s.interval)
	defer cancel()
	// The server may still hold some of them: unsubscribe first, so that
	// the subscription sends them again rather than finding them held.
	s.sub.Remove(ctx, names...)
	if err := s.sub.Add(ctx, names...); err != nil {
		// Probed again at the next check: a partition whose probe still
		// does not come back is renewed again.
		s.log.Warn("fanout: subscribing lost partitions again", "err", err)
	}
}

// Stats returns the source's counters.
func (s *ShardedSource) Stats() ShardedStats {
	s.mu.Lock()
	n := len(s.parts)
	s.mu.Unlock()
	return ShardedStats{Partitions: n, Probes: s.probes.Load(), Lost: s.lost.Load()}
}

// Close stops the probes and ends the subscription.
func (s *ShardedSource) Close() error {
	s.stop()
	<-s.done
	return s.sub.Close()
}
