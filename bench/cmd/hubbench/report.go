package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Assumptions of the 1M estimate.
const (
	targetConns = 1_000_000
	ramUsable   = 0.75 // of a machine's memory, for the hub: the OS and the kernel's socket buffers take the rest
	cpuUsable   = 0.70 // of a machine's cores, for the hub: headroom for bursts and the kernel's network work
	gcHeadroom  = 2.0  // GOGC=100: the heap grows to twice the live heap between collections
)

// kib formats bytes as KiB.
func kib(b float64) string { return fmt.Sprintf("%.1f", b/1024) }

// ms formats a duration in milliseconds, or µs below one.
func ms(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	}
	return fmt.Sprintf("%.1f ms", float64(d)/1e6)
}

// group formats n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(max(n, -n))
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// pct is d as a percentage of one core over w.
func pct(d, w time.Duration) string {
	if w <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(d)/float64(w))
}

// perHub is the figures of one hub.
type perHub struct {
	heap, rss  float64 // bytes per idle connection
	rssLoad    float64 // bytes per connection after the load
	cpu        time.Duration
	deliveries uint64
	cpuPer     float64 // µs per delivery
}

func (r *run) hubFigures() []perHub {
	out := make([]perHub, r.o.hubs)
	for h := range out {
		m := r.mem[h]
		n := float64(max(m.Conns, 1))
		out[h].heap = (float64(m.After.HeapInuse+m.After.StackInuse) - float64(m.Before.HeapInuse+m.Before.StackInuse)) / n
		out[h].rss = (float64(m.After.RSS) - float64(m.Before.RSS)) / n
		ml := r.memLoad[h]
		out[h].rssLoad = (float64(ml.After.RSS) - float64(ml.Before.RSS)) / float64(max(ml.Conns, 1))
		out[h].cpu = r.hub1[h].CPU - r.hub0[h].CPU
		out[h].deliveries = r.hub1[h].Deliveries - r.hub0[h].Deliveries
		if out[h].deliveries > 0 {
			out[h].cpuPer = float64(out[h].cpu.Microseconds()) / float64(out[h].deliveries)
		}
	}
	return out
}

// join formats one figure of every hub, " / " between them.
func join(hs []perHub, f func(perHub) string) string {
	var s []string
	for _, h := range hs {
		s = append(s, f(h))
	}
	return strings.Join(s, " / ")
}

func (r *run) report() string {
	o, p := r.o, r.p
	hs := r.hubFigures()
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	mode := ""
	if o.compression != "shared" {
		mode = ", compression " + o.compression
	}
	w("\n## Fanout across hubs: %s connections over %d hubs, %s messages/s%s\n\n", group(int64(o.conns)), o.hubs, group(int64(o.rate)), mode)
	w("Command:\n\n```\n%s\n```\n\n", r.command)
	for _, e := range r.env {
		w("- %s\n", e)
	}
	w("- machine at the end of the load: %s; load average at its start %s. Everything runs on these 2 cores: "+
		"hubs, client processes, Redis nodes and publisher compete for them\n", r.machine, r.load0)
	repl := "no replicas"
	if o.replicas > 0 {
		repl = fmt.Sprintf("%d replica(s) each", o.replicas)
	}
	w("- cluster: %d primaries, %s, cluster-node-timeout 15 s, persistence off (up in %v)\n", o.nodes, repl, r.clusterT.Round(time.Millisecond))
	opts := "`fanout.New(fanout.Options{})` (Shared compression, the default; threshold 256 B, level 1)"
	if o.compression != "shared" {
		opts = fmt.Sprintf("`fanout.New(fanout.Options{Compression: fanout.%s})` (-compression %s; threshold 256 B, level 1)",
			strings.ToUpper(o.compression[:1])+o.compression[1:], o.compression)
	}
	w("- hubs: %d processes, %s, "+
		"`fanout.NewShardedSource` on `NewPartitions(0, \"\")` (128 partitions), `hub.Relay`; connections per hub %v; "+
		"channels per hub %v\n", o.hubs, opts, p.share, p.hubChannels)
	w("- clients: %d processes; connection i → hub i mod %d, channel ch:<i mod %d>, from 127.0.0.(2 + i/20000); "+
		"offer `permessage-deflate; client_max_window_bits`; every compressed message inflated to read its timestamp\n",
		len(p.clients), o.hubs, o.channels)
	w("- load: %s messages/s for %v, round robin over %s channels (%s followed, %.2f connections each on average), "+
		"%d B payloads (real-JSON text, timestamp first), SPUBLISH from 256 goroutines of one zipline client, "+
		"the messages due published every %v; after a warm-up of %v at the same rate, not measured\n\n",
		group(int64(o.rate)), o.duration, group(int64(o.channels)), group(int64(p.followed())),
		float64(o.conns)/float64(p.followed()), o.size, o.tick, o.warmup)

	deliveriesPerSec := float64(r.received) / r.pub.elapsed.Seconds()
	lost := int64(r.pub.expected) - int64(r.received)
	w("| hubs | conns | conns/hub | channels | rate msg/s | deliveries/s | connect | memory/idle conn heap+stack KiB (per hub) | RSS/idle conn KiB (per hub) | RSS/conn after load KiB (per hub) | hub CPU µs/delivery (per hub) | p50 | p99 | p99.9 | max | lost |\n")
	w("| --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n")
	w("| %d | %s | %s | %s | %s | %s | %.1f s | %s | %s | %s | %s | %s | %s | %s | %s | %s of %s |\n\n",
		o.hubs, group(int64(o.conns)), group(int64((o.conns+o.hubs-1)/o.hubs)), group(int64(o.channels)), group(int64(o.rate)),
		group(int64(math.Round(deliveriesPerSec))), r.connectT.Seconds(),
		join(hs, func(h perHub) string { return kib(h.heap) }), join(hs, func(h perHub) string { return kib(h.rss) }),
		join(hs, func(h perHub) string { return kib(h.rssLoad) }),
		join(hs, func(h perHub) string { return fmt.Sprintf("%.2f", h.cpuPer) }),
		ms(r.lat.quantile(0.50)), ms(r.lat.quantile(0.99)), ms(r.lat.quantile(0.999)), ms(r.lat.maximum()),
		group(lost), group(int64(r.pub.expected)))

	// Notes.
	var retries int
	for _, c := range r.connect {
		retries += c.Retries
	}
	w("- connect: %s connections in %.1f s (%.0f/s), %d handshakes retried; the hubs' sources held every channel %.1f s after the last connection\n",
		group(int64(o.conns)), r.connectT.Seconds(), float64(o.conns)/r.connectT.Seconds(), retries, r.subWait.Seconds())
	for h, s := range r.subStats {
		avg := time.Duration(0)
		if s.AddCalls > 0 {
			avg = s.AddTotal / time.Duration(s.AddCalls)
		}
		pre := r.hubPre[h]
		w("  - hub %d: %d channels subscribed in %d Add calls (mean %v, longest %v, %d failed), %d partitions; "+
			"from before the first connection until subscribed: CPU %v, %d GCs\n",
			h, s.Subscribed, s.AddCalls, avg.Round(time.Microsecond), s.AddMax.Round(time.Microsecond), s.AddErrors, s.Sharded.Partitions,
			(s.CPU - pre.CPU).Round(time.Millisecond), s.NumGC-pre.NumGC)
	}
	w("- idle memory (after a GC and FreeOSMemory, %v after subscribing), per hub, before any connection → after: ", o.idle)
	var ms1 []string
	for h, m := range r.mem {
		ml := r.memLoad[h].After
		ms1 = append(ms1, fmt.Sprintf("hub %d heap+stack %.1f → %.1f MiB, RSS %.1f → %.1f MiB (%d conns; after the load %.1f and %.1f MiB)", h,
			float64(m.Before.HeapInuse+m.Before.StackInuse)/(1<<20), float64(m.After.HeapInuse+m.After.StackInuse)/(1<<20),
			float64(m.Before.RSS)/(1<<20), float64(m.After.RSS)/(1<<20), m.Conns,
			float64(ml.HeapInuse+ml.StackInuse)/(1<<20), float64(ml.RSS)/(1<<20)))
	}
	w("%s; client processes %.1f KiB RSS per connection, the inflate windows still empty\n", strings.Join(ms1, "; "),
		float64(r.clientRSS)/float64(o.conns)/1024)
	w("- publisher: %s published in %.1f s (%.0f/s), %d failed, %d reached another number of hubs than follow the channel; "+
		"pacing fell behind by %v at most\n", group(int64(r.pub.published)), r.pub.elapsed.Seconds(),
		float64(r.pub.published)/r.pub.elapsed.Seconds(), r.pub.failed, r.pub.mismatched, r.pub.behind.Round(time.Millisecond))
	if r.pub.firstErr != "" {
		w("  - first publish error: %s\n", r.pub.firstErr)
	}
	if r.o.warmup > 0 {
		w("- warm-up (not in the table): %s published in %.1f s, %s of %s deliveries, latency p50 %s, p99 %s, p99.9 %s, max %s\n",
			group(int64(r.warmPub.published)), r.warmPub.elapsed.Seconds(), group(int64(r.warmReceived)), group(int64(r.warmPub.expected)),
			ms(r.warmLat.quantile(0.5)), ms(r.warmLat.quantile(0.99)), ms(r.warmLat.quantile(0.999)), ms(r.warmLat.maximum()))
		for h := range r.hubWarm0 {
			a, z := r.hubWarm0[h], r.hub0[h]
			w("  - hub %d in the warm-up: %s relayed, %s deliveries, %d dropped, %d gaps, %d partitions lost, CPU %v, %d GCs\n",
				h, group(int64(z.Relay.Messages-a.Relay.Messages)), group(int64(z.Deliveries-a.Deliveries)), z.Dropped-a.Dropped,
				z.Relay.Gaps-a.Relay.Gaps, z.Sharded.Lost-a.Sharded.Lost, (z.CPU - a.CPU).Round(time.Millisecond), z.NumGC-a.NumGC)
		}
	}
	var rtt hist
	rtt.add(r.pub.rtt.snapshot(), 1)
	w("- SPUBLISH round trip (timestamp to reply, in the publisher): p50 %s, p99 %s, max %s\n",
		ms(rtt.quantile(0.5)), ms(rtt.quantile(0.99)), ms(rtt.maximum()))
	w("- delivered: %s of %s expected to connections (%s compressed), %d unreadable, %d connections closed; latency from %s samples\n",
		group(int64(r.received)), group(int64(r.pub.expected)), group(int64(r.compressed)), r.bad, r.closed, group(int64(r.lat.count())))
	if r.firstClientErr != "" {
		w("  - first client error: %s\n", r.firstClientErr)
	}
	// The timeline of the longest latencies, by the second the message was
	// sent in, over the load phase.
	var secs []string
	first := r.sys0.Time.Unix()
	for s := first; s <= first+int64(r.pub.elapsed.Seconds()); s++ {
		if d, ok := r.secondMax[s]; ok {
			secs = append(secs, fmt.Sprintf("%.0f", float64(d)/1e6))
		} else {
			secs = append(secs, "–")
		}
	}
	w("  - longest latency of the messages sent in each second of the load, ms: %s\n", strings.Join(secs, " "))
	for h := range r.hub1 {
		a, z := r.hub0[h], r.hub1[h]
		d := max(z.Deliveries-a.Deliveries, 1)
		w("- hub %d during the load: %s deliveries, %s broadcasts, %d dropped, %d slow-closed, %s relayed, %d gaps, %d relay errors, "+
			"%d partitions lost; %.1f%% shared-context frames, %.2f compressions/broadcast, %.1f wire B/delivery, %.3f writes/delivery; "+
			"CPU %v (%s of a core); %d GCs, %v of pauses\n", h, group(int64(z.Deliveries-a.Deliveries)), group(int64(z.Broadcasts-a.Broadcasts)),
			z.Dropped-a.Dropped, z.SlowClosed-a.SlowClosed, group(int64(z.Relay.Messages-a.Relay.Messages)),
			z.Relay.Gaps-a.Relay.Gaps, z.Relay.Errors-a.Relay.Errors, z.Sharded.Lost-a.Sharded.Lost,
			100*float64(z.SharedFrames-a.SharedFrames)/float64(d),
			float64(z.Compressions-a.Compressions)/float64(max(z.Broadcasts-a.Broadcasts, 1)),
			float64(z.WireBytes-a.WireBytes)/float64(d), float64(z.Writes-a.Writes)/float64(d),
			hs[h].cpu.Round(time.Millisecond), pct(hs[h].cpu, r.window), z.NumGC-a.NumGC, (z.GCPause - a.GCPause).Round(time.Microsecond))
	}
	u := r.sys1.Sub(r.sys0)
	var hubCPU time.Duration
	var hubDeliveries uint64
	for _, h := range hs {
		hubCPU += h.cpu
		hubDeliveries += h.deliveries
	}
	busy := "?"
	if r.sys0.Busy > 0 && r.sys1.Busy > 0 {
		busy = fmt.Sprintf("%.0f %% of its 2 cores", 100*float64(r.sys1.Busy-r.sys0.Busy)/float64(r.window)/2)
	}
	redis := "?"
	if u.ServerOK {
		redis = pct(u.Server, r.window)
	}
	w("- CPU over the load window (%.1f s, publishing and draining), in %% of one core: hubs %s, client processes %s, "+
		"Redis nodes %s, coordinator (publisher) %s; the machine was busy %s; load average %s at the end\n",
		r.window.Seconds(), pct(hubCPU, r.window), pct(r.clientCPU, r.window), redis, pct(u.Self, r.window), busy, r.load1)

	// The estimate for 1M connections.
	var memPer float64
	for _, h := range hs {
		memPer = max(memPer, h.rss, h.heap, h.rssLoad)
	}
	perConnRate := float64(r.received) / r.pub.elapsed.Seconds() / float64(o.conns)
	cpuPer := 0.0
	if hubDeliveries > 0 {
		cpuPer = float64(hubCPU.Microseconds()) / float64(hubDeliveries)
	}
	w("\n**Estimate for 1M connections** at %.2f deliveries/s per connection (%s deliveries/s in all), "+
		"from %.1f KiB per connection (the largest of heap+stack and RSS, idle and after the load, the worst hub: "+
		"heap+stack counts memory allocated but not yet touched, which RSS shows once traffic has touched it) and %.2f µs of hub CPU per delivery (all hubs): ",
		perConnRate, group(int64(math.Round(perConnRate*targetConns))), memPer/1024, cpuPer)
	var ests []string
	for _, cores := range []int{2, 16} {
		ram := float64(cores) * o.ramPerCore * (1 << 30)
		byMem := ram * ramUsable / (memPer * gcHeadroom)
		byCPU := math.Inf(1)
		if cpuPer > 0 && perConnRate > 0 {
			byCPU = float64(cores) * cpuUsable * 1e6 / cpuPer / perConnRate
		}
		perMachine := min(byMem, byCPU)
		machines := math.Ceil(targetConns / perMachine)
		limit := "memory"
		if byCPU < byMem {
			limit = "CPU"
		}
		ests = append(ests, fmt.Sprintf("**%.0f × %d-core** (%.0f GiB; memory allows %s connections each, CPU %s: %s bound)",
			machines, cores, float64(cores)*o.ramPerCore, group(int64(byMem)), group(int64(math.Min(byCPU, 1e12))), limit))
	}
	w("%s.\n", strings.Join(ests, ", "))
	w("Assumptions: %.0f GiB per core; %.0f %% of the memory for the hub, each connection's RSS doubled for the heap's growth "+
		"between collections (GOGC=100), kernel socket memory of idle sockets left out; %.0f %% of the cores for the hub, "+
		"at the CPU per delivery measured here, where %.1f connections per channel per hub share each relayed message's cost "+
		"(a hub that follows more channels with fewer connections each pays more per delivery); the hub's own process only "+
		"(no clients, Redis or publisher on the machine); one hub process per machine, its open-file limit raised; "+
		"the same message rate, channels and payloads as here.\n",
		o.ramPerCore, 100*ramUsable, 100*cpuUsable, float64(o.conns)/float64(sum(p.hubChannels)))
	return b.String()
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
