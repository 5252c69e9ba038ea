package layout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline"
)

// This file is the migration protocol on a cluster, where a key's place in
// the old layout and in the new one are in different hash slots and no
// script can touch both. Every step is a script in one slot; the package
// documentation ("Migration on a cluster") states the protocol and why it
// never loses a write nor brings a deleted value back.

// splitting reports whether operations follow the cluster protocol: a
// migration on a cluster.
func (s *Store) splitting() bool { return s.cluster && s.old != nil }

// anchor is the key whose hash slot l's operations run in: its bucket, or
// its plain key.
func (l location) anchor() string {
	if l.bucket != "" {
		return l.bucket
	}
	return l.plain
}

// addWhere appends the arguments that name l to the operations of the
// cluster protocol (A, Q, Y): see opsLua.
func (s *Store) addWhere(o *opList, args []any, l location) []any {
	t, m := s.touchedKey(l)
	if l.bucket != "" {
		return append(args, "h", o.key(l.bucket), o.key(s.oversizeKey(l)), l.field, o.key(t), m)
	}
	return append(args, "g", o.key(l.plain), 0, "", o.key(t), m)
}

// addTouch appends the recording of l in its tombstone set.
func (s *Store) addTouch(o *opList, l location) {
	if protocolFault == faultNoTombstones {
		return
	}
	t, m := s.touchedKey(l)
	o.op("K", o.key(t), m)
}

// protocolFault breaks the cluster protocol on purpose, for the tests that
// check that the migration property test catches a broken protocol. It is
// never set otherwise.
var protocolFault string

const (
	faultNoTombstones = "no tombstones" // deletions and writes with a TTL leave no tombstone
	faultBlindCopy    = "blind copy"    // a move overwrites what the new layout holds
)

// The states the A operation replies.
const (
	stateAbsent  = 0 // neither layout holds a live value
	stateTouched = 1 // a tombstone: deleted, or expired after a write with a TTL
	stateLive    = 2 // the new layout holds the value
	stateOld     = 3 // only the old layout holds it, and it has not expired
)

// lists groups operations by hash slot: on a cluster one opList per
// anchor, so that each script's keys share a slot; on a single server one
// list for all, one atomic script.
type lists struct {
	split bool
	all   []*opList
	at    map[string]*opList
}

func (s *Store) newLists() *lists { return &lists{split: s.cluster, at: map[string]*opList{}} }

// of returns the list for operations in anchor's slot.
func (g *lists) of(anchor string) *opList {
	if !g.split {
		anchor = ""
	}
	o := g.at[anchor]
	if o == nil {
		o = &opList{}
		g.at[anchor] = o
		g.all = append(g.all, o)
	}
	return o
}

// ref is one operation's reply: its list and its index there.
type ref struct {
	o *opList
	i int
}

// replies are the results of a run of lists.
type replies map[*opList][]zipline.Value

func (r replies) of(x ref) zipline.Value { return r[x.o][x.i] }

// run runs every list, each a script call, in one round trip. A list whose
// guard failed fails the run with errChanged.
func (g *lists) run(ctx context.Context, s *Store) (replies, error) { return s.runWith(ctx, g, nil) }

// runWith runs g's lists with the reads that queue puts on the same batch
// (see runOpsBatch).
func (s *Store) runWith(ctx context.Context, g *lists, queue func(b *zipline.Batch) error) (replies, error) {
	results, err := s.runOpsBatch(ctx, g.all, queue)
	if err != nil {
		return nil, err
	}
	out := make(replies, len(g.all))
	for i, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		out[g.all[i]] = r.replies
	}
	return out, nil
}

// observation is a key's copy in the old layout as an operation of the
// cluster protocol read it, before its step in the new layout.
type observation struct {
	ol  location
	raw []byte // stored bytes, in the old layout's encoding; nil: none
	at  int64  // its expiry in Unix milliseconds; 0: none
}

// exp is the observation in the terms of opsLua's A operation.
func (ob observation) exp() string {
	switch {
	case ob.raw == nil:
		return ""
	case ob.at == 0:
		return "0"
	}
	return strconv.FormatInt(ob.at, 10)
}

// observe reads the old copies of keys, each with its expiry (an absolute
// time), in one round trip.
func (s *Store) observe(ctx context.Context, keys []string) ([]observation, error) {
	ms, err := s.readMoving(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]observation, len(keys))
	for i := range ms {
		m := &ms[i]
		out[i].ol = m.r.l
		raw, err := m.r.resolveHere()
		switch {
		case errors.Is(err, zipline.Nil):
			// none, or an oversize value deleted between its marker's read
			// and its own: gone either way
		case err != nil:
			return nil, fmt.Errorf("layout: reading %q from the old layout: %w", m.key, err)
		default:
			out[i].raw = raw
			out[i].at = m.expiryAt(s.fieldTTL.pexpiretime)
		}
	}
	return out, nil
}

// execReads runs a batch of reads whose null replies are answers, not
// failures (Nil, and server errors each future keeps for itself).
func execReads(ctx context.Context, b *zipline.Batch) error {
	err := b.Exec(ctx)
	var se *zipline.ServerError
	if err == nil || errors.Is(err, zipline.Nil) || errors.As(err, &se) {
		return nil
	}
	return err
}

// adoption appends to o, for the key located at l, an A operation and, if
// ob is a value this layout can hold, the writing of it (re-encoded, with
// its expiry) that A runs only when l is absent and untouched and ob lives
// on: the key moves to the new layout in the same script as what follows.
// It returns the A operation's index, and whether the old copy must stay
// where it is (kept: its TTL cannot live in this layout); then A skips the
// extra operations that follow it when the old copy is the live one, as
// they act on the new layout.
func (s *Store) adoption(o *opList, l location, ob observation, extra int) (state int, kept bool, err error) {
	var enc []byte
	var e expiry
	if ob.raw != nil {
		var at time.Time
		if ob.at != 0 {
			at = time.UnixMilli(ob.at)
		}
		e, err = s.expiryIn(l, 0, at)
		switch {
		case errors.Is(err, ErrNoFieldTTL):
			kept, err = true, nil
		case err != nil:
			return 0, false, err
		default:
			plain, err := s.old.decode(ob.raw)
			if err != nil {
				return 0, false, fmt.Errorf("layout: decoding a value of the old layout: %w", err)
			}
			enc = s.encode(plain)
		}
	}
	if enc == nil {
		mode, n := "a", 0
		if kept {
			mode, n = "g", extra
		}
		return o.op(append(s.addWhere(o, []any{"A", mode, n}, l), ob.exp())...), kept, nil
	}
	mode, n := "a", 1
	if protocolFault == faultBlindCopy {
		mode, n = "g", 0 // the write runs whatever the state
	}
	state = o.op(append(s.addWhere(o, []any{"A", mode, n}, l), ob.exp())...)
	s.addWrite(o, l, enc, e, false)
	return state, false, nil
}

// deleteOld deletes the old copies of keys (those located at ols), each in
// its own slot's script, in one round trip. Callers delete an old copy only
// once the new layout answers for the key (a value or a tombstone), when
// nothing reads the old copy any more.
func (s *Store) deleteOld(ctx context.Context, ols []location) error {
	if len(ols) == 0 {
		return nil
	}
	g := s.old.newLists()
	for _, ol := range ols {
		s.old.addDelete(g.of(ol.anchor()), ol)
	}
	_, err := g.run(ctx, s)
	return err
}

// splitSet writes enc at key (located at l) with a TTL of ttl (0: none),
// then deletes the old copy. A write with a TTL also touches the key, so
// that once it expires the old layout cannot answer for it again.
func (s *Store) splitSet(ctx context.Context, key string, l location, enc []byte, ttl time.Duration) error {
	e, err := s.expiryIn(l, ttl, time.Time{})
	if err != nil {
		return err
	}
	var o opList
	s.addWrite(&o, l, enc, e, false)
	if e.mode != "" {
		s.addTouch(&o, l)
	}
	if _, err := s.runOps(ctx, &o); err != nil {
		return err
	}
	return s.deleteOldOf(ctx, key)
}

// deleteOldOf deletes the old copies of keys, once the new layout answers
// for them.
func (s *Store) deleteOldOf(ctx context.Context, keys ...string) error {
	ols := make([]location, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		ol, err := s.old.locate(k)
		if err != nil {
			return err
		}
		ols = append(ols, ol)
	}
	return s.deleteOld(ctx, ols)
}

// splitDel deletes keys: it reads their old copies, then in the new layout
// deletes each key and touches it (a tombstone), reading whether it existed
// there or, if absent and untouched, in the old copy just read; last it
// deletes the old copies.
func (s *Store) splitDel(ctx context.Context, keys []string) (int64, error) {
	uniq := make([]string, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	obs, err := s.observe(ctx, uniq)
	if err != nil {
		return 0, err
	}
	g := s.newLists()
	states := make([]ref, len(uniq))
	for i, k := range uniq {
		l, err := s.locate(k)
		if err != nil {
			return 0, err
		}
		o := g.of(l.anchor())
		states[i] = ref{o, o.op(append(s.addWhere(o, []any{"A", "g", 0}, l), obs[i].exp())...)}
		s.addDelete(o, l)
		s.addTouch(o, l)
	}
	r, err := g.run(ctx, s)
	if err != nil {
		return 0, err
	}
	var n int64
	var ols []location
	for i := range uniq {
		switch st, _ := r.of(states[i]).AsInt64(); st {
		case stateLive, stateOld:
			n++
		}
		if obs[i].raw != nil {
			ols = append(ols, obs[i].ol)
		}
	}
	return n, s.deleteOld(ctx, ols)
}

// splitGetSet writes v at key and returns the previous value: the new
// layout's if it answers for the key, else the old copy read just before.
func (s *Store) splitGetSet(ctx context.Context, key string, l location, v []byte) ([]byte, error) {
	obs, err := s.observe(ctx, []string{key})
	if err != nil {
		return nil, err
	}
	ob := obs[0]
	var o opList
	st := o.op(append(s.addWhere(&o, []any{"A", "g", 0}, l), ob.exp())...)
	q := o.op(s.addWhere(&o, []any{"Q"}, l)...)
	s.addWrite(&o, l, s.encode(v), expiry{}, false)
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return nil, err
	}
	if ob.raw != nil {
		if err := s.deleteOld(ctx, []location{ob.ol}); err != nil {
			return nil, err
		}
	}
	switch state, _ := r[st].AsInt64(); state {
	case stateLive:
		prev, err := r[q].AsBytes()
		if err != nil {
			return nil, err
		}
		return s.decode(prev)
	case stateOld:
		return s.old.decode(ob.raw)
	}
	return nil, zipline.Nil
}

// splitSetNX writes v at key if no layout holds a live value, in one
// script of the new layout that sees the old copy read just before.
func (s *Store) splitSetNX(ctx context.Context, key string, l location, v []byte) (bool, error) {
	obs, err := s.observe(ctx, []string{key})
	if err != nil {
		return false, err
	}
	ob := obs[0]
	enc := s.encode(v)
	var o opList
	st := o.op(append(s.addWhere(&o, []any{"A", "g", 1}, l), ob.exp())...)
	w := s.addWrite(&o, l, enc, expiry{}, true)
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return false, err
	}
	state, _ := r[st].AsInt64()
	if state == stateOld {
		return false, nil // the old copy is the live value
	}
	n, err := r[w].AsInt64()
	if err != nil {
		return false, err
	}
	if n == 1 && l.bucket != "" && !s.fits(enc) {
		s.oversize.Add(1)
	}
	if ob.raw != nil { // the new layout answers for the key now
		if err := s.deleteOld(ctx, []location{ob.ol}); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// addIncr appends the increment of l's integer by n; without create only
// if the key exists.
func (s *Store) addIncr(o *opList, l location, n int64, create bool) int {
	if l.bucket != "" {
		return o.op("I", "h", o.key(l.bucket), l.field, n, flag(create))
	}
	return o.op("I", "g", o.key(l.plain), "", n, flag(create))
}

// splitIncrBy adds n to key's integer: in one script of the new layout, it
// moves the old copy read just before if the new layout does not answer for
// the key, and increments. An old copy whose TTL the new layout cannot hold
// is incremented where it is, if it still exists.
func (s *Store) splitIncrBy(ctx context.Context, key string, l location, n int64) (int64, error) {
	for attempt := 0; ; attempt++ {
		obs, err := s.observe(ctx, []string{key})
		if err != nil {
			return 0, err
		}
		ob := obs[0]
		var o opList
		st, kept, err := s.adoption(&o, l, ob, 1)
		if err != nil {
			return 0, err
		}
		inc := s.addIncr(&o, l, n, true)
		r, err := s.runOps(ctx, &o)
		if err != nil {
			return 0, err
		}
		if state, _ := r[st].AsInt64(); kept && state == stateOld {
			var p opList
			s.old.addIncr(&p, ob.ol, n, false)
			rr, err := s.old.runOps(ctx, &p)
			if err != nil {
				return 0, err
			}
			if !rr[0].IsNil() {
				return rr[0].AsInt64()
			}
			// The old copy vanished meanwhile (deleted, or expired): again.
			if attempt == maxMoveAttempts {
				return 0, fmt.Errorf("layout: %q kept changing while being incremented", key)
			}
			continue
		}
		if ob.raw != nil { // the new layout answers for the key now
			if err := s.deleteOld(ctx, []location{ob.ol}); err != nil {
				return 0, err
			}
		}
		return r[inc].AsInt64()
	}
}

// splitExpire sets key to expire after d: in the new layout (moving the old
// copy read just before, if the new layout does not answer for the key),
// touched so that once it expires the old layout cannot answer again; or,
// for an old copy whose TTL the new layout cannot hold, where it is.
func (s *Store) splitExpire(ctx context.Context, key string, l location, d time.Duration) (bool, error) {
	obs, err := s.observe(ctx, []string{key})
	if err != nil {
		return false, err
	}
	ob := obs[0]
	ms := d.Milliseconds()
	if l.bucket != "" && !s.fieldTTL.hpexpire {
		// Only a key kept in the old layout for its TTL can take one.
		var o opList
		st := o.op(append(s.addWhere(&o, []any{"A", "g", 0}, l), ob.exp())...)
		r, err := s.runOps(ctx, &o)
		if err != nil {
			return false, err
		}
		switch state, _ := r[st].AsInt64(); {
		case state == stateLive, state == stateOld && ob.at == 0:
			return false, ErrNoFieldTTL
		case state == stateOld:
			return s.old.expireInPlace(ctx, ob.ol, ms)
		}
		return false, nil
	}
	var o opList
	st, _, err := s.adoption(&o, l, ob, 0)
	if err != nil {
		return false, err
	}
	var x int
	if l.bucket != "" {
		x = o.op("X", o.key(l.bucket), o.key(s.oversizeKey(l)), 0, l.field, ms)
	} else {
		x = o.op("W", o.key(l.plain), ms)
	}
	s.addTouch(&o, l)
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return false, err
	}
	if state, _ := r[st].AsInt64(); ob.raw != nil && state != stateAbsent {
		if err := s.deleteOld(ctx, []location{ob.ol}); err != nil {
			return false, err
		}
	}
	code, err := r[x].AsInt64()
	if l.bucket == "" {
		return code == 1, err
	}
	return code == 1 || code == 2, err
}

// expireInPlace sets the value at l, in this layout, to expire after ms
// milliseconds, if it exists.
func (s *Store) expireInPlace(ctx context.Context, l location, ms int64) (bool, error) {
	var o opList
	if l.bucket == "" {
		o.op("W", o.key(l.plain), ms)
	} else if s.fieldTTL.hpexpire {
		o.op("X", o.key(l.bucket), o.key(s.oversizeKey(l)), 0, l.field, ms)
	} else {
		return false, ErrNoFieldTTL
	}
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return false, err
	}
	code, err := r[0].AsInt64()
	return code == 1 || (l.bucket != "" && code == 2), err
}

// splitTTL reads the old copy's TTL, then the new layout's, which wins
// unless the key is absent and untouched there.
func (s *Store) splitTTL(ctx context.Context, key string) (time.Duration, error) {
	l, err := s.locate(key)
	if err != nil {
		return 0, err
	}
	ol, err := s.old.locate(key)
	if err != nil {
		return 0, err
	}
	before, err := s.old.ttlAt(ctx, ol)
	if err != nil {
		return 0, err
	}
	var o opList
	y := o.op(append(s.addWhere(&o, []any{"Y"}, l), flag(s.fieldTTL.hpexpire))...)
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return 0, err
	}
	switch ms, err := r[y].AsInt64(); {
	case err != nil:
		return 0, err
	case ms == -3:
		return zipline.NoKey, nil
	case ms == -2:
		return before, nil
	case ms == -1:
		return zipline.NoExpiry, nil
	default:
		return time.Duration(ms) * time.Millisecond, nil
	}
}

// splitGet reads keys: each key's old copy and its state in the new layout
// (Q: its value, or whether it is touched), as splitRounds does.
func (s *Store) splitGet(ctx context.Context, keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	reads := make([]*read, len(keys))
	err := s.splitRounds(ctx, keys, func(o *opList, l location) int { return o.op(s.addWhere(o, []any{"Q"}, l)...) },
		func(b *zipline.Batch, i int) (err error) {
			reads[i], err = s.old.queueRead(b, keys[i], true)
			return err
		},
		func(i int, v zipline.Value, first bool) (bool, error) {
			if v.Kind() != "integer" { // the new layout's value
				raw, err := v.AsBytes()
				if err == nil {
					out[i], err = s.decode(raw)
				}
				return false, err
			}
			if state, _ := v.AsInt64(); state == stateTouched || !first {
				return false, nil
			}
			raw, err := reads[i].resolveHere()
			switch {
			case errors.Is(err, zipline.Nil):
				return true, nil
			case err != nil:
				return false, err
			}
			out[i], err = s.old.decode(raw)
			return false, err
		})
	return out, err
}

// splitExists counts the keys that exist, as splitGet decides.
func (s *Store) splitExists(ctx context.Context, keys []string) (int64, error) {
	var n int64
	checks := make([]*existsCheck, len(keys))
	err := s.splitRounds(ctx, keys, func(o *opList, l location) int {
		return o.op(append(s.addWhere(o, []any{"A", "g", 0}, l), "")...)
	},
		func(b *zipline.Batch, i int) error {
			cs, err := s.old.queueExists(b, keys[i:i+1], true)
			if err == nil {
				checks[i] = cs[0][0]
			}
			return err
		},
		func(i int, v zipline.Value, first bool) (bool, error) {
			switch state, _ := v.AsInt64(); {
			case state == stateLive:
				n++
				return false, nil
			case state == stateTouched || !first:
				return false, nil
			}
			ok, err := checks[i].exists()
			if ok {
				n++
			}
			return !ok, err
		})
	return n, err
}

// splitRounds runs a read of keys in the cluster protocol: probe appends
// a key's operation in the new layout, old queues its reads in the old
// one, in one round trip, in no particular order; then decide says, from
// the new layout's reply, whether the key needs another look: it answers
// unless the key is absent and untouched there, and then the old copy
// does, unless there is none. Such keys are probed again, in the new
// layout only (first false): their old copy may have moved between the two
// reads, which the second sees; if it finds nothing, the key was in
// neither layout at that moment.
func (s *Store) splitRounds(ctx context.Context, keys []string, probe func(o *opList, l location) int,
	old func(b *zipline.Batch, i int) error, decide func(i int, v zipline.Value, first bool) (bool, error)) error {
	locs := make([]location, len(keys))
	need := make([]int, len(keys))
	for i, k := range keys {
		var err error
		if locs[i], err = s.locate(k); err != nil {
			return err
		}
		need[i] = i
	}
	for round := 0; len(need) > 0; round++ {
		g := s.newLists()
		probes := make([]ref, len(keys))
		for _, i := range need {
			o := g.of(locs[i].anchor())
			probes[i] = ref{o, probe(o, locs[i])}
		}
		var queue func(b *zipline.Batch) error
		if round == 0 {
			queue = func(b *zipline.Batch) error {
				for _, i := range need {
					if err := old(b, i); err != nil {
						return err
					}
				}
				return nil
			}
		}
		r, err := s.runWith(ctx, g, queue)
		if err != nil {
			return err
		}
		var again []int
		for _, i := range need {
			more, err := decide(i, r.of(probes[i]), round == 0)
			if err != nil {
				return err
			}
			if more {
				again = append(again, i)
			}
		}
		need = again
	}
	return nil
}

// splitMove moves keys: it reads their old copies, then writes each into
// the new layout, in the new layout's slot, only if the key is absent and
// untouched there (a write or a deletion since wins), and last deletes the
// old copies that the new layout now answers for. Three round trips for
// any number of keys.
func (s *Store) splitMove(ctx context.Context, keys []string) (MoveResult, error) {
	m, err := s.startMove(ctx, keys)
	if err != nil {
		return m.res, err
	}
	if err := m.adopt(ctx); err != nil {
		return m.res, err
	}
	return m.finish(ctx)
}

// splitMoving is a move on a cluster between its steps (tests hold one
// across other operations, as a slow mover would).
type splitMoving struct {
	s     *Store
	keys  []string
	obs   []observation
	steps []moveStep
	g     *lists
	res   MoveResult
	ols   []location // old copies to delete
}

type moveStep struct {
	i     int
	state ref
	kept  bool
}

// startMove is a move's first step: reading the old copies.
func (s *Store) startMove(ctx context.Context, keys []string) (*splitMoving, error) {
	m := &splitMoving{s: s, keys: keys}
	var err error
	m.obs, err = s.observe(ctx, keys)
	return m, err
}

// adopt is a move's second step: each old copy read is written into the
// new layout where the key is absent and untouched.
func (m *splitMoving) adopt(ctx context.Context) error {
	s := m.s
	m.g = s.newLists()
	for i, ob := range m.obs {
		if ob.raw == nil {
			m.res.Missing++
			continue
		}
		l, err := s.locate(m.keys[i])
		if err != nil {
			return err
		}
		o := m.g.of(l.anchor())
		st, kept, err := s.adoption(o, l, ob, 0)
		if err != nil {
			return err
		}
		m.steps = append(m.steps, moveStep{i: i, state: ref{o, st}, kept: kept})
	}
	r, err := m.g.run(ctx, s)
	if err != nil {
		return err
	}
	for _, st := range m.steps {
		switch state, _ := r.of(st.state).AsInt64(); {
		case state == stateOld && st.kept:
			m.res.Kept++
			continue
		case state == stateOld:
			m.res.Moved++
		case state == stateAbsent: // expired since it was read
			m.res.Missing++
			continue
		default: // the new layout answers for the key: the old copy is dead
			m.res.Replaced++
		}
		m.ols = append(m.ols, m.obs[st.i].ol)
	}
	return nil
}

// finish is a move's last step: deleting the old copies that the new
// layout answers for.
func (m *splitMoving) finish(ctx context.Context) (MoveResult, error) {
	return m.res, m.s.deleteOld(ctx, m.ols)
}

// splitOnlyInOld returns the keys that the new layout neither holds nor
// has touched.
func (s *Store) splitOnlyInOld(ctx context.Context, keys []string) ([]string, error) {
	g := s.newLists()
	st := make([]ref, len(keys))
	for i, k := range keys {
		l, err := s.locate(k)
		if err != nil {
			return nil, err
		}
		o := g.of(l.anchor())
		st[i] = ref{o, o.op(append(s.addWhere(o, []any{"A", "g", 0}, l), "")...)}
	}
	r, err := g.run(ctx, s)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, k := range keys {
		if state, _ := r.of(st[i]).AsInt64(); state == stateAbsent {
			out = append(out, k)
		}
	}
	return out, nil
}
