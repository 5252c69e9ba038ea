package zipline

// This file follows a Sentinel group: it asks the sentinels who the
// primary, the replicas and the other sentinels are, listens for
// +switch-master on one of them, and moves the carrier (sentinel.go) to a
// new primary.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// sentinelGroup is what a sentinel says of the group.
type sentinelGroup struct {
	primary   string
	replicas  []string // those the sentinel does not think down
	sentinels []string
	// failoverTimeout is the group's failover-timeout (SENTINEL MASTER),
	// zero if the sentinel did not say.
	failoverTimeout time.Duration
}

// errUnknownGroup is a sentinel that does not monitor the group.
var errUnknownGroup = errors.New("does not monitor the group")

// ask asks the sentinels, the one that answered last first, for the
// group, and returns the first answer. The replicas and the other
// sentinels are asked only when needed (ReadFrom, a first answer).
func (k *sentinel) ask(ctx context.Context) (sentinelGroup, error) {
	var errs []error
	for range k.sentinelCount() {
		p, addr, err := k.queryConn(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g, err := k.askOne(ctx, p)
		if err == nil {
			return g, nil
		}
		errs = append(errs, fmt.Errorf("sentinel %s: %w", addr, err))
		k.dropQuery(p)
	}
	return sentinelGroup{}, fmt.Errorf("zipline: sentinel group %q: no sentinel named its primary: %w", k.name, errors.Join(errs...))
}

// askOne asks one sentinel for the group, in one round trip.
func (k *sentinel) askOne(ctx context.Context, p *pipe.Pipe) (sentinelGroup, error) {
	cmds := [][]string{{"SENTINEL", "GET-MASTER-ADDR-BY-NAME", k.name}, {"SENTINEL", "SENTINELS", k.name}, {"SENTINEL", "MASTER", k.name}}
	if k.s.opts.ReadFrom != ReadPrimary {
		cmds = append(cmds, []string{"SENTINEL", "REPLICAS", k.name})
	}
	call := p.NewCall()
	for _, c := range cmds {
		call.Buf = appendCommandStrings(call.Buf, c...)
	}
	call.N = len(cmds)
	if err := p.Do(ctx, call); err != nil {
		return sentinelGroup{}, err
	}
	defer call.Release()
	replies := call.Replies()
	var g sentinelGroup
	addr := replies[0].Elems()
	if replies[0].IsError() {
		return g, serverError(replies[0])
	}
	if len(addr) != 2 {
		return g, errUnknownGroup
	}
	g.primary = net.JoinHostPort(string(addr[0].Bytes()), string(addr[1].Bytes()))
	g.sentinels = instances(replies[1], false)
	if ms, err := strconv.ParseInt(string(fieldMap(replies[2])["failover-timeout"].Bytes()), 10, 64); err == nil && ms > 0 {
		g.failoverTimeout = time.Duration(ms) * time.Millisecond
	}
	if len(replies) > 3 {
		g.replicas = instances(replies[3], true)
	}
	return g, nil
}

// instances reads the addresses of SENTINEL SENTINELS' or REPLICAS'
// entries (field, value pairs, or maps in RESP3), leaving out those the
// sentinel thinks down, and, for replicas, those whose link to the
// primary is broken.
func instances(v resp.Value, replicas bool) []string {
	var out []string
	for _, e := range v.Elems() {
		f := fieldMap(e)
		flags := string(f["flags"].Bytes())
		if strings.Contains(flags, "s_down") || strings.Contains(flags, "o_down") || strings.Contains(flags, "disconnected") {
			continue
		}
		if replicas && string(f["master-link-status"].Bytes()) == "err" {
			continue
		}
		out = append(out, net.JoinHostPort(string(f["ip"].Bytes()), string(f["port"].Bytes())))
	}
	slices.Sort(out)
	return out
}

// sentinelCount is how many sentinels are known.
func (k *sentinel) sentinelCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.sentinels)
}

// queryConn returns the connection to the sentinel asked last, or dials
// the next one.
func (k *sentinel) queryConn(ctx context.Context) (*pipe.Pipe, string, error) {
	k.mu.Lock()
	if k.query != nil && !k.query.Closed() {
		p, addr := k.query, k.sentinels[k.queryAt]
		k.mu.Unlock()
		return p, addr, nil
	}
	k.queryAt = (k.queryAt + 1) % len(k.sentinels)
	addr := k.sentinels[k.queryAt]
	k.mu.Unlock()
	p, err := k.dialSentinel(ctx, addr, nil, nil)
	if err != nil {
		return nil, addr, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.query != nil {
		k.query.Close()
	}
	k.query = p
	return p, addr, nil
}

// dropQuery closes p, the query connection, after it failed.
func (k *sentinel) dropQuery(p *pipe.Pipe) {
	k.mu.Lock()
	if k.query == p {
		k.query = nil
	}
	k.mu.Unlock()
	p.Close()
}

// dialSentinel connects to a sentinel: RESP2, the sentinels' credentials,
// no database, and no reconnect (the next sentinel is tried instead).
// With push set it is a subscriber connection, whose loss calls lost.
func (k *sentinel) dialSentinel(ctx context.Context, addr string, push func(resp.Value), lost func()) (*pipe.Pipe, error) {
	o := k.s.opts
	po := pipe.Options{
		Dial:             k.s.dialer(addr),
		Protocol:         2,
		Username:         o.Sentinel.Username,
		Password:         o.Sentinel.Password,
		ClientName:       o.ClientName,
		HandshakeTimeout: o.DialTimeout,
		IOTimeout:        o.DialTimeout,
		NoReconnect:      true,
		Limits:           k.s.limits,
		Logger:           o.Logger.With("sentinel", addr),
	}
	if push != nil {
		po.RESP2Subscriber = true
		po.IOTimeout, po.HealthCheckInterval = sentinelPing, sentinelPing
		po.Push = []pipe.PushHandler{{Kinds: []string{"message"}, Handle: push, Inline: true}}
		po.OnDisconnect = func(error) { lost() }
	}
	p, err := pipe.New(ctx, po)
	if err != nil {
		return nil, connectError(addr, err)
	}
	return p, nil
}

// sentinelPing is the liveness probe of the subscription to a sentinel: a
// silent sentinel is left for another within two of them.
const sentinelPing = time.Second

// learnSentinels adds the sentinels another one named to those known.
func (k *sentinel) learnSentinels(addrs []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, a := range addrs {
		if !slices.Contains(k.sentinels, a) {
			k.sentinels = append(k.sentinels, a)
		}
	}
}

// connectPrimary connects to addr as the group's primary: every
// connection (the first, and each after a loss) checks that the server is
// a primary, and, after a loss, that the sentinels still name it, so that
// a demoted primary, or an old one restarted before the sentinels told it
// to follow the new one, never takes a write. It also says CLIENT CAPA
// redirect, so that a Valkey primary demoted under it answers -REDIRECT
// (which send follows) instead of refusing writes.
func (k *sentinel) connectPrimary(ctx context.Context, addr string) (*node, error) {
	// No solo connections on a Sentinel group's servers: on one
	// connection a failover fails only the calls in flight, where several
	// connections each learn of it on their own, and a caller can fail
	// again on the next one (TestSentinelFollowsAFailover).
	d, err := newDirectWith(ctx, k.s, addr, func(po *pipe.Options) {
		po.WaitForReconnect = false // send waits for the next primary instead
		po.OnConnect = func(su *pipe.Setup) error {
			vs, err := su.Pipeline("", []string{"ROLE"}, []string{"CLIENT", "CAPA", "redirect"})
			if err != nil {
				return err
			}
			if !answersAsPrimary(vs[0]) {
				k.refresh()
				return fmt.Errorf("zipline: %s is not a primary any more", addr)
			}
			if su.Reconnect {
				ctx, cancel := context.WithTimeout(k.life, k.s.opts.DialTimeout)
				defer cancel()
				if g, err := k.ask(ctx); err == nil && g.primary != addr {
					k.refresh()
					return fmt.Errorf("zipline: the sentinels name %s, not %s, as the primary of %q", g.primary, addr, k.name)
				}
				// With no sentinel reachable, a server that says it is the
				// primary is trusted.
			}
			return nil
		}
	}, 0)
	if err != nil {
		return nil, err
	}
	return &node{addr: addr, direct: d}, nil
}

// useReplicas makes addrs the replicas reads may go to (with ReadPrimary,
// none): it connects to new ones and closes those that left.
func (k *sentinel) useReplicas(ctx context.Context, addrs []string) {
	if k.s.opts.ReadFrom == ReadPrimary {
		return
	}
	cur := k.view.Load()
	var keep, gone []*node
	have := map[string]*node{}
	for _, n := range cur.replicas {
		have[n.addr] = n
	}
	for _, a := range addrs {
		if a == cur.primary.addr {
			continue
		}
		if n := have[a]; n != nil {
			keep = append(keep, n)
			delete(have, a)
			continue
		}
		d, err := newDirectWith(ctx, k.s, a, func(po *pipe.Options) { po.WaitForReconnect = false }, 0)
		if err != nil {
			k.s.opts.Logger.Debug("zipline: sentinel replica unreachable", "addr", a, "err", err)
			continue
		}
		keep = append(keep, &node{addr: a, direct: d})
	}
	for _, n := range have {
		gone = append(gone, n)
	}
	if len(gone) == 0 && len(keep) == len(cur.replicas) {
		same := true
		for i := range keep {
			same = same && keep[i] == cur.replicas[i]
		}
		if same {
			return
		}
	}
	slices.SortFunc(keep, func(a, b *node) int { return strings.Compare(a.addr, b.addr) })
	k.view.Store(&sentinelView{primary: cur.primary, replicas: keep})
	k.retire(gone...)
}

// followSentinels is the one goroutine that changes the view. It keeps a
// subscription on every known sentinel (any of them may lead a failover,
// and only the leader tells its early steps), and asks the sentinels on a
// request (a lost or refused primary, a -REDIRECT), after every new
// subscription (messages may have been missed), and every
// DefaultSentinelRefresh.
func (k *sentinel) followSentinels() {
	defer k.wg.Done()
	tick := time.NewTicker(DefaultSentinelRefresh)
	defer tick.Stop()
	probe, stopProbes := k.s.latencyProbes()
	defer stopProbes()
	subs := map[string]*pipe.Pipe{}
	defer func() {
		for _, p := range subs {
			p.Close()
		}
	}()
	events := make(chan sentinelEvent, 16)
	lost := make(chan string, 16)
	backoff := k.s.opts.ReconnectBackoffMin
	resubscribe := true
	for {
		var retry <-chan time.Time
		var retryTimer *time.Timer
		if resubscribe {
			if k.subscribeAll(subs, events, lost) {
				k.refreshNow() // what happened while nobody listened
			}
			resubscribe = false
			if len(subs) == 0 {
				retryTimer = time.NewTimer(backoff)
				retry = retryTimer.C
				backoff = min(2*backoff, k.s.opts.ReconnectBackoffMax)
			} else {
				backoff = k.s.opts.ReconnectBackoffMin
			}
		}
		select {
		case <-k.life.Done():
			return
		case e := <-events:
			k.apply(e)
		case addr := <-k.want:
			k.switchTo(addr)
			k.refreshNow()
		case <-k.refreshAsked:
			k.refreshNow()
		case <-tick.C:
			k.refreshNow()
			resubscribe = true // sentinels met since, or back
		case <-probe:
			v := k.view.Load()
			k.s.probeLatency(k.life, append([]*node{v.primary}, v.replicas...))
		case addr := <-lost:
			if p := subs[addr]; p != nil {
				p.Close()
				delete(subs, addr)
			}
			resubscribe = len(subs) == 0
			if !resubscribe && retry == nil {
				// Others still listen: try this one again at the next tick.
				continue
			}
		case <-retry:
			resubscribe = true
		}
		if retryTimer != nil {
			retryTimer.Stop()
		}
	}
}

// sentinelEvent is what a sentinel said of this group.
type sentinelEvent struct {
	kind eventKind
	addr string // the new primary, for evSwitched and evPromoted
	// master is the primary being failed over, for evTrying,
	// evFailingOver and evAborted: an event about another (a failover
	// this client has seen the end of) is stale.
	master string
	// from is the sentinel that said it.
	from string
}

type eventKind uint8

const (
	// evTrying: a sentinel began a failover (+try-failover): the first
	// event, a sentinel tick or more before any replica is promoted, so
	// the hold starts before the old primary's writes could be lost, even
	// when this client reads the event late.
	evTrying eventKind = iota
	// evFailingOver: the leader is about to promote a replica
	// (+failover-state-send-slaveof-noone). From then on, the old
	// primary's writes would be lost when it is demoted: writes wait for
	// the new primary.
	evFailingOver
	// evPromoted: the replica answered as a primary (the leader's
	// +promoted-slave, well before the others' +switch-master).
	evPromoted
	// evSwitched: +switch-master, the failover's end.
	evSwitched
	// evAborted: the failover was given up; the primary stays.
	evAborted
)

// sentinelChannels are the events subscribed to, by channel.
var sentinelChannels = []string{
	"+try-failover", "+switch-master", "+promoted-slave", "+failover-state-send-slaveof-noone",
	"-failover-abort-not-elected", "-failover-abort-no-good-slave", "-failover-abort-slave-timeout",
}

// How long writes wait after a sentinel began to promote a replica, should
// nothing follow: the group's failover-timeout, within which the sentinels
// end every failover they begin (promoted, or aborted: both end the wait
// at once), and at least failoverHoldMin, at most failoverHoldMax, so that
// an end that this client missed (its subscription lost) does not hold
// writes for the default's three minutes. A hold shorter than the
// failover sends writes to a primary about to be demoted: before
// failover-timeout was read the hold was 3 s, against the test groups' 5
// s, and a failover slowed by CPU-bound neighbours could outlast it (the
// suspected cause of 42 calls lost once in a soak run; not reproduced).
const (
	failoverHoldMin = 3 * time.Second
	failoverHoldMax = 30 * time.Second
)

// learnFailoverTimeout keeps the group's failover-timeout, when a sentinel
// said it.
func (k *sentinel) learnFailoverTimeout(d time.Duration) {
	if d > 0 {
		k.failoverTimeout.Store(int64(d))
	}
}

// failoverHold returns how long a failover's start holds writes.
func (k *sentinel) failoverHold() time.Duration {
	return min(max(time.Duration(k.failoverTimeout.Load()), failoverHoldMin), failoverHoldMax)
}

// apply acts on an event, on the goroutine that follows the sentinels.
//
// A failover's start holds writes (holdWrites, also called from the
// subscription's reader as the event arrives, so that a busy follower
// does not delay it); its end, the new primary, releases them; so does an
// abort, once every sentinel that tried has given up (a sentinel that was
// not elected aborts while the one that was may still be promoting).
func (k *sentinel) apply(e sentinelEvent) {
	switch e.kind {
	case evTrying, evFailingOver:
		if k.holdWrites(e) {
			if k.trying == nil {
				k.trying = map[string]bool{}
			}
			k.trying[e.from] = true
		}
	case evPromoted, evSwitched:
		if k.switchTo(e.addr) { // which releases the writes when it switches
			k.releaseWrites()
		}
	case evAborted:
		k.holdMu.Lock()
		defer k.holdMu.Unlock()
		if v := k.view.Load(); v == nil || v.primary.addr != e.master {
			return // about a failover already over
		}
		delete(k.trying, e.from)
		if len(k.trying) == 0 {
			k.holdUntil.Store(0)
			k.wake()
		}
	}
}

// releaseWrites ends a hold: the failover is over.
func (k *sentinel) releaseWrites() {
	k.holdMu.Lock()
	clear(k.trying)
	k.holdUntil.Store(0)
	k.holdMu.Unlock()
	k.wake()
}

// holdWrites starts holding writes for a failover of the current primary
// (evTrying, evFailingOver), and reports whether e is about it: one about
// a primary already replaced is stale (events from different sentinels
// arrive in no common order). The check and the hold are one step under
// holdMu, as a switch and its release are: a start read before a switch
// cannot land after its release.
func (k *sentinel) holdWrites(e sentinelEvent) bool {
	k.holdMu.Lock()
	defer k.holdMu.Unlock()
	v := k.view.Load()
	if v == nil || v.primary.addr != e.master {
		return false
	}
	if k.holdUntil.Load() == 0 {
		k.s.opts.Logger.Info("zipline: sentinel failover begun; writes wait for the new primary", "group", k.name, "sentinel", e.from)
	}
	k.holdUntil.Store(time.Now().Add(k.failoverHold()).UnixNano())
	return true
}

// parseSentinelEvent reads a message on one of sentinelChannels, and
// reports whether it concerns group name.
//
//	+try-failover master <name> <ip> <port>
//	+failover-state-send-slaveof-noone slave <ip:port> <ip> <port> @ <name> <primary ip> <primary port>
//	+promoted-slave slave <ip:port> <ip> <port> @ <name> <primary ip> <primary port>
//	+switch-master <name> <old ip> <old port> <new ip> <new port>
//	-failover-abort-... master <name> <ip> <port>
func parseSentinelEvent(channel, payload, name string) (sentinelEvent, bool) {
	f := strings.Fields(payload)
	switch channel {
	case "+switch-master":
		if len(f) == 5 && f[0] == name {
			return sentinelEvent{kind: evSwitched, addr: net.JoinHostPort(f[3], f[4])}, true
		}
	case "+promoted-slave", "+failover-state-send-slaveof-noone":
		at := slices.Index(f, "@")
		if at == 4 && len(f) == at+4 && f[at+1] == name {
			kind := evPromoted
			if channel != "+promoted-slave" {
				kind = evFailingOver
			}
			return sentinelEvent{kind: kind, addr: net.JoinHostPort(f[2], f[3]), master: net.JoinHostPort(f[at+2], f[at+3])}, true
		}
	case "+try-failover":
		if len(f) >= 4 && f[0] == "master" && f[1] == name {
			return sentinelEvent{kind: evTrying, master: net.JoinHostPort(f[2], f[3])}, true
		}
	default:
		if strings.HasPrefix(channel, "-failover-abort") && len(f) >= 4 && f[0] == "master" && f[1] == name {
			return sentinelEvent{kind: evAborted, master: net.JoinHostPort(f[2], f[3])}, true
		}
	}
	return sentinelEvent{}, false
}

// subscribeAll subscribes to the events on every known sentinel not yet
// subscribed to (at most maxSentinelSubscriptions), and reports whether
// it made a new subscription. Events go to events, a lost connection's
// address to lost.
func (k *sentinel) subscribeAll(subs map[string]*pipe.Pipe, events chan<- sentinelEvent, lost chan<- string) bool {
	k.mu.Lock()
	addrs := slices.Clone(k.sentinels)
	k.mu.Unlock()
	added := false
	for _, addr := range addrs {
		if subs[addr] != nil || len(subs) >= maxSentinelSubscriptions {
			continue
		}
		ctx, cancel := context.WithTimeout(k.life, k.s.opts.DialTimeout)
		p, err := k.dialSentinel(ctx, addr, func(v resp.Value) {
			e := v.Elems()
			if len(e) < 3 {
				return
			}
			if ev, ok := parseSentinelEvent(string(e[1].Bytes()), string(e[2].Bytes()), k.name); ok {
				ev.from = addr
				if ev.kind == evTrying || ev.kind == evFailingOver {
					k.holdWrites(ev) // at once: the follower may be busy asking a sentinel
				}
				select {
				case events <- ev:
				default: // a burst: the refresh after it corrects any miss
					k.refresh()
				}
			}
		}, func() {
			select {
			case lost <- addr:
			default:
			}
		})
		if err == nil {
			call := p.NewCall()
			for _, ch := range sentinelChannels {
				call.Buf = appendCommandStrings(call.Buf, "SUBSCRIBE", ch)
			}
			call.N, call.PushKind = len(sentinelChannels), "subscribe"
			if err = p.Do(ctx, call); err == nil {
				call.Release()
			}
		}
		cancel()
		if err != nil {
			if p != nil {
				p.Close()
			}
			k.s.opts.Logger.Debug("zipline: sentinel subscription failed", "sentinel", addr, "err", err)
			continue
		}
		subs[addr] = p
		added = true
	}
	return added
}

// maxSentinelSubscriptions bounds the sentinels subscribed to at once.
const maxSentinelSubscriptions = 8

// refreshNow asks the sentinels for the group and applies the answer.
func (k *sentinel) refreshNow() {
	ctx, cancel := context.WithTimeout(k.life, k.s.opts.DialTimeout)
	defer cancel()
	g, err := k.ask(ctx)
	if err != nil {
		if k.life.Err() == nil {
			k.s.opts.Logger.Warn("zipline: sentinels unreachable", "group", k.name, "err", err)
		}
		return
	}
	k.learnSentinels(g.sentinels)
	k.learnFailoverTimeout(g.failoverTimeout)
	k.switchTo(g.primary)
	k.useReplicas(ctx, g.replicas)
}

// wake wakes the requests waiting for a change.
func (k *sentinel) wake() {
	k.mu.Lock()
	close(k.changed)
	k.changed = make(chan struct{})
	k.mu.Unlock()
}

// switchTo makes addr the primary, if it is not already: it connects
// (the connection checks that addr is a primary), swaps the view, wakes
// the requests waiting for a primary, and closes the old primary's
// connections. It reports whether addr is the primary now.
func (k *sentinel) switchTo(addr string) bool {
	cur := k.view.Load()
	if cur == nil {
		return false
	}
	if cur.primary.addr == addr {
		return true
	}
	ctx, cancel := context.WithTimeout(k.life, k.s.opts.DialTimeout)
	defer cancel()
	p, err := k.connectPrimary(ctx, addr)
	if err != nil {
		if k.life.Err() == nil {
			k.s.opts.Logger.Warn("zipline: new sentinel primary unreachable", "group", k.name, "addr", addr, "err", err)
		}
		return false
	}
	var replicas []*node
	var gone []*node
	for _, n := range cur.replicas {
		if n.addr == addr {
			gone = append(gone, n) // promoted: reached as the primary now
			continue
		}
		replicas = append(replicas, n)
	}
	// The new view and the hold's end are one step (see holdWrites): a
	// failover's start read against the old primary cannot hold writes to
	// the new one after this.
	k.holdMu.Lock()
	k.view.Store(&sentinelView{primary: p, replicas: replicas})
	clear(k.trying)
	k.holdUntil.Store(0)
	k.holdMu.Unlock()
	k.switches.Add(1)
	k.wake()
	k.s.opts.Logger.Info("zipline: sentinel primary switched", "group", k.name, "from", cur.primary.addr, "to", addr)
	k.retire(append(gone, cur.primary)...)
	return true
}
