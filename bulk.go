package zipline

import (
	"context"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// This file holds a server's bulk lane: one more connection, for requests
// of Options.BulkThreshold bytes or more and for the commands on keys whose
// replies have been that large, so that a small request never waits in the
// shared connection's stream behind a large value.
//
// Why: TCP delivers a connection's bytes in order. On the shared
// connection a 64-byte GET written after a 700 KB SET waits until the SET
// has gone out, and its reply waits behind every large reply ahead of it:
// at 1 Gbit/s, 5.6 ms per 700 KB value (bench/RESULTS.md, DoorDash). On
// a connection of their own the large values queue behind each other
// only. Requests are known large by their size; replies only once read,
// so the lane learns the keys whose replies were large (a bounded table
// of their hashes) and sends their next commands on it, until one reply
// comes back small again.
//
// The lane also bounds what it has in flight (bulkWindow): a path shared
// by every connection (a NIC's queue, a rate limit) holds what is written
// to it in order too, and four 700 KB values in flight at once kept a
// small GET on another connection waiting 20 ms at 1 Gbit/s. Held back in
// the client, the large values wait for each other instead, and the path
// holds one at a time.
//
// Order: a caller's own commands keep their order, since each waits for
// its reply before the next goes; a Batch or a transaction is one request
// on one connection. What two callers send at the same time has no order
// on the shared connection either.

// DefaultBulkThreshold is Options.BulkThreshold's default: 64 KiB, half a
// millisecond at 1 Gbit/s.
const DefaultBulkThreshold = 64 << 10

// bulkLane is a server's bulk lane. A nil *bulkLane has none: cost says
// no request goes there, learn and close do nothing.
type bulkLane struct {
	threshold int
	dialer    sideDialer // opens the lane's connection

	p atomic.Pointer[pipe.Pipe] // nil until dialled

	// keys holds the hashes of keys whose last request or reply was
	// large, each in the slot its hash picks (a newer key takes an older
	// one's slot); learned counts the slots in use, so that a client that
	// never met a large value does not hash its keys.
	keys    [bulkKeySlots]atomic.Uint64
	sizes   [bulkKeySlots]atomic.Uint32 // the last large value's size, per slot of keys
	learned atomic.Int32
	seed    maphash.Seed

	// inFlight bounds the bytes of its requests and their replies in
	// flight to bulkWindow; waiting are the callers held back, in order.
	windowMu sync.Mutex
	inFlight int
	waiting  []*bulkWaiter
}

// bulkKeySlots bounds the keys the lane remembers: 24 KiB per server.
const bulkKeySlots = 2048

// bulkWindow bounds the bytes a bulk lane has in flight, requests and
// their replies counted (a reply by the size the key's last one had). One
// request always goes, whatever its size. 256 KiB keeps two milliseconds
// of a 1 Gbit/s path busy, which a round trip within a zone does not
// exceed.
const bulkWindow = 256 << 10

type bulkWaiter struct {
	n     int
	ready chan struct{}
}

func newBulkLane(opts pipe.Options, threshold int) *bulkLane {
	if threshold <= 0 {
		return nil
	}
	return &bulkLane{threshold: threshold, dialer: newSideDialer(opts, "bulk connection"), seed: maphash.MakeSeed()}
}

// cost returns, for a request of size bytes whose first key is key (""
// for none), the bytes it is expected to have in flight on the lane, or 0
// when it does not go there.
func (b *bulkLane) cost(size int, key string) int {
	if b == nil {
		return 0
	}
	if size >= b.threshold {
		return size
	}
	if key == "" || b.learned.Load() == 0 {
		return 0
	}
	h := b.hash(key)
	i := h % bulkKeySlots
	if b.keys[i].Load() != h {
		return 0
	}
	return size + int(b.sizes[i].Load())
}

// admit waits until the lane may carry n more bytes (see bulkWindow), or
// ctx ends: then the request was not sent, and the error says so. Callers
// give the bytes back with release once the reply is in.
func (b *bulkLane) admit(ctx context.Context, n int) error {
	b.windowMu.Lock()
	if len(b.waiting) == 0 && (b.inFlight == 0 || b.inFlight+n <= bulkWindow) {
		b.inFlight += n
		b.windowMu.Unlock()
		return nil
	}
	w := &bulkWaiter{n: n, ready: make(chan struct{})}
	b.waiting = append(b.waiting, w)
	b.windowMu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.windowMu.Lock()
		if i := slices.Index(b.waiting, w); i >= 0 {
			b.waiting = slices.Delete(b.waiting, i, i+1)
			b.windowMu.Unlock()
			b.release(0) // those behind it may fit now
			return notSentErr(ctx.Err())
		}
		b.windowMu.Unlock()
		b.release(n) // admitted as ctx ended: give the bytes back
		return notSentErr(ctx.Err())
	}
}

// release gives back n bytes admit took, and lets the callers in that now
// fit, in the order they came.
func (b *bulkLane) release(n int) {
	b.windowMu.Lock()
	defer b.windowMu.Unlock()
	b.inFlight -= n
	for len(b.waiting) > 0 {
		w := b.waiting[0]
		if b.inFlight > 0 && b.inFlight+w.n > bulkWindow {
			break
		}
		b.inFlight += w.n
		b.waiting = b.waiting[1:]
		close(w.ready)
	}
}

// take returns the lane's connection when it is up, or nil: then the
// request goes on the shared connection, and the lane is dialled in the
// background, so that no caller waits for its handshake.
func (b *bulkLane) take() *pipe.Pipe {
	if p := b.p.Load(); p != nil && p.Connected() {
		return p
	} else if p != nil {
		return nil // reconnecting on its own
	}
	b.dialer.mu.Lock()
	defer b.dialer.mu.Unlock()
	if b.p.Load() == nil && b.dialer.ready() {
		b.dialer.start(b.p.Store)
	}
	return nil
}

// learn records what a command on key of sent bytes moved: a large
// request or reply sends the key's next commands on the lane, a small
// request with a small reply, on a key the lane knows, sends them back to
// the shared connection. A large request counts as what the key will
// give back (a SET of 700 KB is followed by GETs of 700 KB), and its small
// reply (+OK) says nothing against that.
func (b *bulkLane) learn(key string, sent int, v resp.Value) {
	if b == nil || key == "" {
		return
	}
	size := replySize(v)
	if sent >= b.threshold {
		size = max(size, sent)
	}
	large := size >= b.threshold
	if !large && b.learned.Load() == 0 {
		return
	}
	h := b.hash(key)
	slot := &b.keys[h%bulkKeySlots]
	old := slot.Load()
	switch {
	case large:
		b.sizes[h%bulkKeySlots].Store(uint32(min(size, math.MaxUint32)))
		if old != h && slot.CompareAndSwap(old, h) && old == 0 {
			b.learned.Add(1)
		}
	case !large && old == h:
		if slot.CompareAndSwap(h, 0) {
			b.learned.Add(-1)
		}
	}
}

// hash is never 0, which marks a free slot.
func (b *bulkLane) hash(key string) uint64 { return maphash.String(b.seed, key) | 1 }

// replySize is how many bytes a reply's strings hold, which is what makes
// it slow to read: a bulk string's length, or the sum over an array's
// (or a map's) elements, one level down.
func replySize(v resp.Value) int {
	if n := len(v.Bytes()); n > 0 {
		return n
	}
	size := 0
	for _, e := range v.Elems() {
		size += len(e.Bytes())
	}
	return size
}

func (b *bulkLane) stats(st *Stats) {
	if b == nil {
		return
	}
	if p := b.p.Load(); p != nil {
		st.addPipe(p)
		if p.Connected() {
			st.BulkOpen++
		}
	}
}

// close closes the lane, a dial under way included: requests in flight on
// it get their replies first, as on the shared connection.
func (b *bulkLane) close() {
	if b == nil {
		return
	}
	b.dialer.close(nil)
	if p := b.p.Load(); p != nil {
		p.Close()
	}
}

// firstKey returns the first of args marked a key, or "".
func firstKey(args []arg) string {
	for i := range args {
		if args[i].kind == argKey {
			return args[i].s
		}
	}
	return ""
}
