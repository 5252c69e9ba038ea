package zipline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// pubsubLoad publishes a numbered stream on each of its channels, one
// message a millisecond each, and reads them back through one
// Subscription, checking each message as it comes: a message may be
// missing only after a gap was reported (ErrGap), and none comes late or
// twice before one. Around a switch the servers themselves deliver out of
// order and twice: every node of a shard delivers its messages, so a
// message the old primary took reaches its subscribers there and again,
// forwarded over the cluster bus, through the new one; those are counted.
// A message missing soon after a gap (switchSettles) is the switch's.
// Pub/sub keeps nothing across a reconnection, so losing messages through
// a switch is allowed; losing them silently is not. Nor is order kept
// across a switch: a message the former primary took before it stepped
// down reaches the new one over the cluster bus, behind messages
// published to the new one directly; late messages after a gap are
// counted, not refused.
type pubsubLoad struct {
	sub      *Subscription
	channels []string
	stop     chan struct{}
	wg       sync.WaitGroup

	mu        sync.Mutex
	published map[string]int64 // last sequence number published, per channel
	excused   map[string]bool  // a publish failed: its message may be missing
	last      map[string]int64 // highest sequence number received
	seen      map[string]map[int64]bool
	uncovered map[string]map[int64]bool // missing when a later one came, with no gap before it
	gapSince  map[string]bool           // a gap came since the channel's last message
	gaps      int
	late      int // messages that came after a later one (after a gap)
	twice     int // messages that came twice (after a gap)
	reasons   []string
	lastGap   time.Time
	failures  []failure // publishes that failed
	problems  []string
}

// switchSettles is how long after a gap a missing message is still the
// switch's: a publisher whose routes lag the subscriber's can publish
// through the node that just stepped down, which delivers to its own
// subscribers only (seen on Valkey 9.1 under load). The gap reported for
// the switch covers it.
const switchSettles = 2 * time.Second

// startPubSubLoad subscribes to channels (SSubscribe when sharded) and
// starts a publisher per channel and the reader.
func startPubSubLoad(t *testing.T, c *Client, sharded bool, channels ...string) *pubsubLoad {
	t.Helper()
	ctx := context.Background()
	subscribe, publish := c.Subscribe, c.Publish
	if sharded {
		subscribe, publish = c.SSubscribe, c.SPublish
	}
	sub, err := subscribe(ctx, channels...)
	if err != nil {
		t.Fatal(err)
	}
	p := &pubsubLoad{sub: sub, channels: channels, stop: make(chan struct{}),
		published: map[string]int64{}, excused: map[string]bool{}, last: map[string]int64{}, gapSince: map[string]bool{},
		seen: map[string]map[int64]bool{}, uncovered: map[string]map[int64]bool{}}
	for _, ch := range channels {
		p.seen[ch], p.uncovered[ch] = map[int64]bool{}, map[int64]bool{}
	}
	start := time.Now()
	for _, ch := range channels {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for seq := int64(1); ; seq++ {
				select {
				case <-p.stop:
					return
				case <-tick.C:
				}
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := publish(cctx, ch, []byte(strconv.FormatInt(seq, 10)))
				cancel()
				p.mu.Lock()
				p.published[ch] = seq
				if err != nil {
					p.excused[ch] = true
					p.failures = append(p.failures, failure{at: time.Since(start), err: fmt.Errorf("publish: %w", err)})
				}
				p.mu.Unlock()
			}
		}()
	}
	go p.read()
	return p
}

func (p *pubsubLoad) read() {
	for m, err := range p.sub.Messages(context.Background()) {
		p.mu.Lock()
		switch {
		case errors.Is(err, ErrGap):
			p.gaps++
			p.lastGap = time.Now()
			var ge *GapError
			if errors.As(err, &ge) {
				p.reasons = append(p.reasons, ge.Reason)
			}
			for _, ch := range p.channels {
				p.gapSince[ch] = true
			}
		case err != nil:
			p.problems = append(p.problems, fmt.Sprintf("subscription ended: %v", err))
		default:
			seq, perr := strconv.ParseInt(string(m.Payload), 10, 64)
			last := p.last[m.Channel]
			switch {
			case perr != nil:
				p.problems = append(p.problems, fmt.Sprintf("%s: message %q", m.Channel, m.Payload))
			case p.seen[m.Channel][seq] && p.gaps == 0:
				p.problems = append(p.problems, fmt.Sprintf("%s: message %d twice, with no gap reported", m.Channel, seq))
			case p.seen[m.Channel][seq]:
				p.twice++
			case seq < last && p.gaps == 0:
				p.problems = append(p.problems, fmt.Sprintf("%s: message %d after %d, with no gap reported", m.Channel, seq, last))
			case seq < last:
				p.late++
			case seq > last+1 && !p.gapSince[m.Channel] && !p.excused[m.Channel] && time.Since(p.lastGap) > switchSettles:
				// Missing with no gap reported since the last message: lost
				// silently, unless it comes late (counted at finish).
				for miss := last + 1; miss < seq; miss++ {
					p.uncovered[m.Channel][miss] = true
				}
			}
			delete(p.uncovered[m.Channel], seq)
			if p.seen[m.Channel] != nil {
				p.seen[m.Channel][seq] = true
			}
			p.last[m.Channel] = max(last, seq)
			p.gapSince[m.Channel], p.excused[m.Channel] = false, false
		}
		p.mu.Unlock()
	}
}

// finish stops the publishers, waits (10 s at most) until the last
// message published on every channel has arrived, which shows that every
// subscription was restored, closes the subscription and returns the
// failed publishes and the gaps reported, and fails t with the problems
// found.
func (p *pubsubLoad) finish(t *testing.T) (failures []failure, gaps int) {
	t.Helper()
	close(p.stop)
	p.wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		var behind []string
		for _, ch := range p.channels {
			if p.last[ch] < p.published[ch] && !p.excused[ch] {
				behind = append(behind, fmt.Sprintf("%s: %d of %d", ch, p.last[ch], p.published[ch]))
			}
		}
		p.mu.Unlock()
		if len(behind) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("pub/sub: the last messages never arrived: %v", behind)
			break
		}
		time.Sleep(10 * time.Millisecond) // a bounded poll of the reader's progress
	}
	p.sub.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.problems {
		t.Errorf("pub/sub: %s", pr)
	}
	for _, ch := range p.channels {
		if lost := slices.Sorted(maps.Keys(p.uncovered[ch])); len(lost) > 0 {
			t.Errorf("pub/sub: %s: messages %v lost without a gap reported before them", ch, lost)
		}
	}
	if p.late > 0 || p.twice > 0 {
		t.Logf("pub/sub: after a gap, %d messages came late and %d twice", p.late, p.twice)
	}
	t.Logf("pub/sub: gaps %v", p.reasons)
	return p.failures, p.gaps
}

// channelPerShard returns a sharded channel name in each third of the
// slots: one on each primary of a three-shard cluster.
func channelPerShard() []string {
	var out []string
	for i := 0; len(out) < 3; i++ {
		ch := "ps:" + strconv.Itoa(i)
		if int(keySlot(ch))*3/16384 == len(out) {
			out = append(out, ch)
		}
	}
	return out
}
