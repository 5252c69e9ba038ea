package difftest

// The key spaces of the two servers, compared key by key: type, content by
// type, and whether the key has an expiry (not its value: the servers'
// clocks are not in step). zipline's server is read through zipline's Raw
// view, and the stored bytes expanded with Client.DecodeValue, so that a
// compressed value compares as the plaintext it stands for, independently
// of the reply decoding the commands under test use. A stream compares by
// its entries (fields in order), what XINFO says of it, its groups, their
// consumers and pending entries (no times); on Valkey, a hash also by
// which of its fields expire.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
)

type keyState struct {
	typ  string
	str  []byte
	hash map[string][]byte
	list [][]byte
	set  []string
	zset []zipline.Z
	// stream: its entries (fields in order), what XINFO says of it, its
	// groups, their consumers and pending entries (no times).
	stream string
	// fieldTTL: the hash's fields that expire (Valkey: hash field
	// expiration), rendered.
	fieldTTL string
	pttl     time.Duration // NoExpiry without one
	err      error
}

func (s keyState) String() string {
	if s.err != nil {
		return "(error reading it) " + s.err.Error()
	}
	var sb strings.Builder
	sb.WriteString(s.typ)
	switch s.typ {
	case "string":
		sb.WriteString(" " + vbytes(s.str))
	case "hash":
		sb.WriteString(" " + zBytesMap(s.hash))
	case "list":
		sb.WriteString(" " + zBytesList(false)(s.list))
	case "set":
		sb.WriteString(" " + zStrings(true)(s.set))
	case "zset":
		sb.WriteString(" " + zZs(s.zset))
	case "stream":
		sb.WriteString(" " + s.stream)
	}
	if s.fieldTTL != "" {
		sb.WriteString(" fields expiring: " + s.fieldTTL)
	}
	if s.typ != "none" {
		if s.pttl >= 0 {
			sb.WriteString(" (with expiry)")
		} else {
			sb.WriteString(" (no expiry)")
		}
	}
	return sb.String()
}

// zState reads key on zipline's server.
func (r *runner) zState(ctx context.Context, key string) keyState {
	raw := r.zc.Raw()
	dec := r.zc.DecodeValue
	s := keyState{}
	if s.typ, s.err = raw.Type(ctx, key); s.err != nil || s.typ == "none" {
		return s
	}
	switch s.typ {
	case "string":
		var b []byte
		if b, s.err = raw.Get(ctx, key); s.err == nil {
			s.str, s.err = dec(b)
		}
	case "hash":
		var m map[string][]byte
		if m, s.err = raw.HGetAll(ctx, key); s.err == nil {
			s.hash = make(map[string][]byte, len(m))
			for f, v := range m {
				if s.hash[f], s.err = dec(v); s.err != nil {
					break
				}
			}
		}
	case "list":
		var l [][]byte
		if l, s.err = raw.LRange(ctx, key, 0, -1); s.err == nil {
			for _, v := range l {
				d, err := dec(v)
				if err != nil {
					s.err = err
					break
				}
				s.list = append(s.list, d)
			}
		}
	case "set":
		s.set, s.err = raw.SMembers(ctx, key)
	case "zset":
		s.zset, s.err = raw.ZRangeWithScores(ctx, key, 0, -1)
	case "stream":
		s.stream, s.err = r.zStream(ctx, key)
	}
	if s.err == nil && s.typ == "hash" && r.fieldTTLs() {
		fs := make([]string, 0, len(s.hash))
		for f := range s.hash {
			fs = append(fs, f)
		}
		slices.Sort(fs)
		var ttls []time.Duration
		if ttls, s.err = raw.HTTL(ctx, key, fs...); s.err == nil {
			s.fieldTTL = renderFieldTTLs(fs, func(i int) bool { return ttls[i] >= 0 })
		}
	}
	if s.err == nil {
		s.pttl, s.err = raw.PTTL(ctx, key)
	}
	return s
}

// fieldTTLs reports whether the servers have hash field expiration.
func (r *runner) fieldTTLs() bool { return r.pair.kind == testbed.Valkey }

func renderFieldTTLs(fs []string, expires func(i int) bool) string {
	var out []string
	for i, f := range fs {
		if expires(i) {
			out = append(out, vstr(f))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return vlist(out, false)
}

// zStream renders a stream on zipline's server, read with zipline's typed
// stream commands.
func (r *runner) zStream(ctx context.Context, key string) (string, error) {
	raw := r.zc.Raw()
	msgs, err := raw.XRange(ctx, key, "-", "+")
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, m := range msgs {
		sb.WriteString(vstr(m.ID))
		for _, fv := range m.Values {
			sb.WriteString(" " + vstr(fv.Field) + "=" + vbytes(fv.Value))
		}
		sb.WriteString("; ")
	}
	info, err := raw.XInfoStream(ctx, key)
	if err != nil {
		return "", err
	}
	sb.WriteString(zXInfoStream(info))
	groups, err := raw.XInfoGroups(ctx, key)
	if err != nil {
		return "", err
	}
	sb.WriteString(" " + zXInfoGroups(groups))
	for _, g := range groups {
		cs, err := raw.XInfoConsumers(ctx, key, g.Name)
		if err != nil {
			return "", err
		}
		pend, err := raw.XPendingExt(ctx, zipline.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 100000})
		if err != nil {
			return "", err
		}
		sb.WriteString(" " + zXInfoConsumers(cs) + " " + zXPendingExt(pend))
	}
	return sb.String(), nil
}

// gStream renders a stream on go-redis's server: its entries read with Do
// (go-redis's XMessage keeps fields in a map, without their order), the
// rest with go-redis's typed commands.
func (r *runner) gStream(ctx context.Context, key string) (string, error) {
	rows, err := r.rc.Do(ctx, "XRANGE", key, "-", "+").Slice()
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, row := range rows {
		e, _ := row.([]any)
		if len(e) != 2 {
			return "", fmt.Errorf("XRANGE entry %#v", row)
		}
		sb.WriteString(vstr(fmt.Sprint(e[0])))
		fv, _ := e[1].([]any)
		for i := 0; i+1 < len(fv); i += 2 {
			sb.WriteString(" " + vstr(fmt.Sprint(fv[i])) + "=" + vstr(fmt.Sprint(fv[i+1])))
		}
		sb.WriteString("; ")
	}
	info := r.rc.XInfoStream(ctx, key)
	if err := info.Err(); err != nil {
		return "", err
	}
	sb.WriteString(gXInfoStream(info))
	groups := r.rc.XInfoGroups(ctx, key)
	if err := groups.Err(); err != nil {
		return "", err
	}
	sb.WriteString(" " + gXInfoGroups(groups))
	for _, g := range groups.Val() {
		cs := r.rc.XInfoConsumers(ctx, key, g.Name)
		if err := cs.Err(); err != nil {
			return "", err
		}
		pend := r.rc.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 100000})
		if err := pend.Err(); err != nil {
			return "", err
		}
		sb.WriteString(" " + gXInfoConsumers(cs) + " " + gXPendingExt(pend))
	}
	return sb.String(), nil
}

// gState reads key on go-redis's server.
func (r *runner) gState(ctx context.Context, key string) keyState {
	s := keyState{}
	if s.typ, s.err = r.rc.Type(ctx, key).Result(); s.err != nil || s.typ == "none" {
		return s
	}
	switch s.typ {
	case "string":
		var v string
		v, s.err = r.rc.Get(ctx, key).Result()
		s.str = []byte(v)
	case "hash":
		var m map[string]string
		m, s.err = r.rc.HGetAll(ctx, key).Result()
		s.hash = make(map[string][]byte, len(m))
		for f, v := range m {
			s.hash[f] = []byte(v)
		}
	case "list":
		var l []string
		l, s.err = r.rc.LRange(ctx, key, 0, -1).Result()
		for _, v := range l {
			s.list = append(s.list, []byte(v))
		}
	case "set":
		s.set, s.err = r.rc.SMembers(ctx, key).Result()
	case "zset":
		zs, err := r.rc.ZRangeWithScores(ctx, key, 0, -1).Result()
		s.err = err
		for _, z := range zs {
			s.zset = append(s.zset, zipline.Z{Member: fmt.Sprint(z.Member), Score: z.Score})
		}
	case "stream":
		s.stream, s.err = r.gStream(ctx, key)
	}
	if s.err == nil && s.typ == "hash" && r.fieldTTLs() {
		fs := make([]string, 0, len(s.hash))
		for f := range s.hash {
			fs = append(fs, f)
		}
		slices.Sort(fs)
		var ttls []int64
		if ttls, s.err = r.rc.HTTL(ctx, key, fs...).Result(); s.err == nil {
			s.fieldTTL = renderFieldTTLs(fs, func(i int) bool { return i < len(ttls) && ttls[i] >= 0 })
		}
	}
	if s.err == nil {
		s.pttl, s.err = r.rc.PTTL(ctx, key).Result()
	}
	return s
}

// keyNames returns every key on either server, and the generator's.
func (r *runner) keyNames(ctx context.Context) []string {
	seen := map[string]bool{}
	for _, k := range allKeys {
		seen[k] = true
	}
	for k, err := range r.zc.Raw().Scan(ctx, zipline.ScanOptions{Count: 100}) {
		if err != nil {
			r.t.Errorf("SCAN on zipline's server: %v", err)
			break
		}
		seen[k] = true
	}
	var cursor uint64
	for {
		keys, next, err := r.rc.Scan(ctx, cursor, "", 100).Result()
		if err != nil {
			r.t.Errorf("SCAN on go-redis's server: %v", err)
			break
		}
		for _, k := range keys {
			seen[k] = true
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkKeyspace compares every key of the two servers.
func (r *runner) checkKeyspace(ctx context.Context, when string) {
	for _, k := range r.keyNames(ctx) {
		z, g := r.zState(ctx, k), r.gState(ctx, k)
		zs, gs := z.String(), g.String()
		if zs == gs {
			continue
		}
		sig := fmt.Sprintf("KEYSPACE: zipline's server has a %s, go-redis's a %s", z.typ, g.typ)
		if z.typ == g.typ {
			sig = fmt.Sprintf("KEYSPACE: %s content or expiry differs", z.typ)
		}
		r.record(sig, r.idx-1, "key space check "+when, "key "+vstr(k), []string{k},
			"the key differs between the servers", reply{kVal, zs}, reply{kVal, gs})
		r.restore(ctx, k, g)
	}
}

// repair makes keys on zipline's server equal to go-redis's after a
// difference, so that one difference does not cascade into others.
func (r *runner) repair(ctx context.Context, keys []string) {
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		g := r.gState(ctx, k)
		if r.zState(ctx, k).String() != g.String() {
			r.restore(ctx, k, g)
		}
	}
}

// restore writes g to key on zipline's server, through zipline (so that it
// is stored compressed as zipline would store it).
func (r *runner) restore(ctx context.Context, key string, g keyState) {
	if g.err != nil {
		return
	}
	r.zc.Del(ctx, key)
	var err error
	switch g.typ {
	case "string":
		err = r.zc.Set(ctx, key, g.str)
	case "hash":
		var fvs []zipline.FieldValue
		for f, v := range g.hash {
			fvs = append(fvs, zipline.FieldValue{Field: f, Value: v})
		}
		_, err = r.zc.HSet(ctx, key, fvs...)
	case "list":
		_, err = r.zc.RPush(ctx, key, g.list...)
	case "set":
		_, err = r.zc.SAdd(ctx, key, g.set...)
	case "zset":
		_, err = r.zc.ZAdd(ctx, key, g.zset...)
	case "stream":
		// Streams are not compressed: a copy of go-redis's server's,
		// groups and pending entries included.
		var data string
		if data, err = r.rc.Dump(ctx, key).Result(); err == nil {
			err = r.zc.Raw().Restore(ctx, key, 0, []byte(data))
		}
	}
	if err == nil && g.typ == "hash" && g.fieldTTL != "" {
		for f := range g.hash {
			if strings.Contains(g.fieldTTL, vstr(f)) {
				_, err = r.zc.HExpire(ctx, key, 1000*time.Second, "", f)
			}
		}
	}
	if err == nil && g.typ != "none" && g.pttl >= 0 {
		_, err = r.zc.Expire(ctx, key, max(g.pttl, time.Second))
	}
	if err != nil {
		r.t.Logf("restoring %q on zipline's server: %v", key, err)
	}
}
