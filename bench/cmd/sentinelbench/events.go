package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The sentinels' events the bench listens to, for the report's timeline
// of each run: when the primary was seen down by the quorum, when the
// leader began to promote a replica (REPLICAOF NO ONE), when that replica
// answered as a primary, when the failover ended (+switch-master: what
// go-redis and rueidis follow), and when an old primary still claiming
// the role was told to replicate (+convert-to-slave: the demotion in the
// manual scenario).
const (
	evODown        = "+odown"
	evSlaveofNoone = "+failover-state-send-slaveof-noone"
	evPromoted     = "+promoted-slave"
	evSwitch       = "+switch-master"
	evConvert      = "+convert-to-slave"
)

var eventOrder = []string{evODown, evSlaveofNoone, evPromoted, evSwitch, evConvert}

// eventLabels are the events' names in the report.
var eventLabels = map[string]string{
	evODown:        "odown",
	evSlaveofNoone: "promoting",
	evPromoted:     "promoted",
	evSwitch:       "switch-master",
	evConvert:      "old primary demoted",
}

// observer records when each event first reached the bench, on a
// subscription to every sentinel (only the leader publishes a failover's
// steps).
type observer struct {
	base  time.Time
	mu    sync.Mutex
	times map[string][]time.Duration // from base, every arrival
	subs  []*redis.PubSub
	cls   []*redis.SentinelClient
	wg    sync.WaitGroup
}

func observe(ctx context.Context, addrs []string, master string, base time.Time) (*observer, error) {
	o := &observer{base: base, times: map[string][]time.Duration{}}
	for _, a := range addrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, DisableIdentity: true})
		ps := sc.Subscribe(ctx, eventOrder...)
		o.cls, o.subs = append(o.cls, sc), append(o.subs, ps)
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := ps.Receive(cctx) // the first subscription's confirmation
		cancel()
		if err != nil {
			o.close()
			return nil, err
		}
		ch := ps.Channel(redis.WithChannelSize(1000))
		o.wg.Go(func() {
			for m := range ch {
				at := time.Since(o.base)
				// +odown is also said of sentinels and replicas; the
				// others name the group.
				if !strings.Contains(m.Payload, master) || m.Channel == evODown && !strings.HasPrefix(m.Payload, "master ") {
					continue
				}
				o.mu.Lock()
				o.times[m.Channel] = append(o.times[m.Channel], at)
				o.mu.Unlock()
			}
		})
	}
	return o, nil
}

// since returns, for each event, when it first and last reached the bench
// at or after fault, from fault: the leader publishes a failover's steps,
// and every sentinel its own +switch-master once it learns the new
// primary, so that a client subscribed to another sentinel than the
// leader hears it later.
func (o *observer) since(fault time.Duration) (first, last map[string]time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	first, last = map[string]time.Duration{}, map[string]time.Duration{}
	for ev, ts := range o.times {
		for _, t := range ts {
			if t < fault {
				continue
			}
			if d, ok := first[ev]; !ok || t-fault < d {
				first[ev] = t - fault
			}
			last[ev] = max(last[ev], t-fault)
		}
	}
	return first, last
}

func (o *observer) close() {
	for _, ps := range o.subs {
		ps.Close()
	}
	for _, c := range o.cls {
		c.Close()
	}
	o.wg.Wait()
}
