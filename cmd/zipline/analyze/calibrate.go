package analyze

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
)

// -calibrate: for each namespace with a recommendation, write a bounded
// sample of its keys twice under a prefix of its own ("za<8 hex>:"): once
// as they are now, once in the recommended layout; measure each as the
// drop of used_memory (client buffers and scripts aside, settled) when it
// is deleted. What was measured over what the model predicts for exactly
// those keys corrects the namespace's prediction. On a busy server other
// writes move used_memory too: the factors say how far they moved it.

// maxCalibrateBytes bounds the application bytes written per layout.
const maxCalibrateBytes = 16 << 20

func calibrate(ctx context.Context, cfg *Config, cs *conns, r *Report, groups []*group, ev *evaluator) (err error) {
	if cs.writer == nil {
		return errors.New("no connection to the primary")
	}
	byPrefix := map[string]*group{}
	for _, g := range groups {
		byPrefix[g.prefix] = g
	}
	for i := range r.Namespaces {
		ns := &r.Namespaces[i]
		g := byPrefix[ns.Prefix]
		if ns.Recommended == nil || g == nil {
			continue
		}
		nonce := make([]byte, 4)
		if _, err := rand.Read(nonce); err != nil {
			return err
		}
		tag := "za" + hex.EncodeToString(nonce) + ":"
		cal := calibrationGroup(g, tag, cfg.CalibrateKeys, ev)
		if len(cal.patterns) == 0 {
			continue
		}
		o, ok := optionNamed(ev, g, ns.Recommended.Name)
		if !ok {
			continue
		}
		calEv := *ev
		calEv.scale = 1
		calEv.encoded = map[encKey]encoded{}
		oldPred, newEst, err := predictCalibration(&calEv, cal, o, ns.Recommended.Fill)
		if err != nil {
			return err
		}
		oldMeas, newMeas, err := measureCalibration(ctx, cs, cal, o, tag)
		if err != nil {
			return err
		}
		n := 0
		for _, p := range cal.patterns {
			n += len(p.samples)
		}
		fOld, fNew := oldMeas/oldPred, newMeas/newEst.bytes
		r.Calibration = append(r.Calibration,
			CalibrationReport{Namespace: ns.Prefix, Layout: "as it is", Keys: n, Measured: oldMeas, Predicted: oldPred, Factor: fOld},
			CalibrationReport{Namespace: ns.Prefix, Layout: ns.Recommended.Spec, Keys: n, Measured: newMeas,
				Predicted: newEst.bytes, Factor: fNew})
		ns.Bytes *= fOld
		for j := range r.Patterns {
			if r.Patterns[j].Namespace == ns.Prefix {
				r.Patterns[j].Bytes *= fOld
				r.Patterns[j].Share *= fOld
			}
		}
		rec := ns.Recommended
		rec.Bytes *= fNew
		rec.Saved = ns.Bytes - rec.Bytes
		rec.SavedPct = 100 * rec.Saved / ns.Bytes
		rec.Calibrated = true
	}
	return nil
}

func optionNamed(ev *evaluator, g *group, name string) (option, bool) {
	for _, o := range ev.options(g, false) {
		if o.name == name {
			return o, true
		}
	}
	return option{}, false
}

// calibrationGroup is g's samples, at most n keys and maxCalibrateBytes,
// under tag: each pattern's share of n by its keys, whole values only.
// Dense ids are renumbered so that buckets fill as the prediction says
// they will in the whole keyspace.
func calibrationGroup(g *group, tag string, n int, ev *evaluator) *group {
	cal := &group{prefix: tag + g.prefix, zipAs: tag + g.zipAs}
	var total float64
	for _, p := range g.patterns {
		total += float64(p.keys)
	}
	bytesLeft := maxCalibrateBytes
	for _, p := range g.patterns {
		want := int(float64(n) * float64(p.keys) / max(total, 1))
		cp := &patternStats{pattern: p.pattern, prefix: tag + p.prefix, types: map[string]int64{"string": 0},
			encodings: map[string]int64{}}
		for i := range p.samples {
			s := p.samples[i]
			if len(cp.samples) >= want || s.truncated || len(s.value) > bytesLeft {
				continue
			}
			bytesLeft -= len(s.value)
			s.key = tag + s.key
			if s.ttl > 0 {
				s.ttl = max(s.ttl, time.Hour) // not to expire while measured
			}
			cp.samples = append(cp.samples, s)
		}
		cp.keys = int64(len(cp.samples))
		cp.types["string"] = cp.keys
		if len(cp.samples) > 0 {
			cal.patterns = append(cal.patterns, cp)
		}
	}
	return cal
}

// renumberDense gives the samples of a group's integer-id pattern ids
// that fill Dense(per) buckets fill at a time.
func renumberDense(cal *group, per int, fill float64) {
	f := max(int(fill), 1)
	for _, p := range cal.patterns {
		if p.prefix != cal.prefix {
			continue
		}
		p.ids = p.ids[:0]
		for i := range p.samples {
			s := &p.samples[i]
			if _, ok := redisUint(s.key[len(cal.prefix):]); !ok {
				continue
			}
			id := uint64(i/f)*uint64(per) + uint64(i%f)
			s.key = cal.prefix + fmt.Sprint(id)
			p.ids = append(p.ids, id)
			p.tailInts++
		}
	}
}

// predictCalibration is what the model says the calibration keys cost as
// they are and in option o.
func predictCalibration(ev *evaluator, cal *group, o option, fill float64) (old float64, est estimate, err error) {
	if o.dense > 0 {
		renumberDense(cal, o.dense, fill)
	}
	for _, p := range cal.patterns {
		old += ev.nowBytes(p)
	}
	if o.hashedFor > 0 {
		var n int
		for _, p := range cal.patterns {
			n += len(p.samples)
		}
		o.hashedFor = n
	}
	est, err = ev.evaluate(cal, o, nil, nil)
	return old, est, err
}

// measureCalibration writes the calibration keys as they are, measures,
// deletes them, then the same in option o's layout, and returns both
// measurements. Everything under tag is deleted however it ends.
func measureCalibration(ctx context.Context, cs *conns, cal *group, o option, tag string) (old, now float64, err error) {
	defer func() {
		// A fresh context: the keys go even if ctx ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, deleteTagged(cctx, cs, tag))
	}()
	var pairs []zipline.KeyValue
	var ttls []time.Duration
	for _, p := range cal.patterns {
		for _, s := range p.samples {
			pairs = append(pairs, zipline.KeyValue{Key: s.key, Value: s.value})
			ttls = append(ttls, s.ttl)
		}
	}
	b := cs.writer.Raw().Batch()
	for i, kv := range pairs {
		if ttls[i] > 0 {
			b.Set(kv.Key, kv.Value, zipline.PX(ttls[i]))
		} else {
			b.Set(kv.Key, kv.Value)
		}
	}
	if err := b.Exec(ctx); err != nil {
		return 0, 0, err
	}
	if old, err = freedByDeleting(ctx, cs, tag); err != nil {
		return 0, 0, err
	}

	ns := layout.Namespace{Prefix: cal.prefix, ZipAs: cal.zipAs}
	switch {
	case o.dense > 0:
		ns.Buckets = layout.Dense(o.dense)
	case o.hashedFor > 0:
		ns.Buckets = layout.HashedFor(o.hashedFor)
	}
	ns.Codec = zipline.Compression{Backend: o.backend}
	st, err := layout.New(ctx, cs.writer, ns)
	if err != nil {
		return 0, 0, err
	}
	var plain []zipline.KeyValue
	var withTTL []int
	for i, kv := range pairs {
		if ttls[i] > 0 {
			withTTL = append(withTTL, i)
		} else {
			plain = append(plain, kv)
		}
	}
	for from := 0; from < len(plain); from += 500 {
		if err := st.MSet(ctx, plain[from:min(from+500, len(plain))]...); err != nil {
			return 0, 0, err
		}
	}
	if err := setEach(ctx, st, pairs, ttls, withTTL); err != nil {
		return 0, 0, err
	}
	now, err = freedByDeleting(ctx, cs, tag)
	return old, now, err
}

// freedByDeleting deletes the keys under tag and returns how much memory
// that freed: what they cost, as a migration frees or takes it (deleting
// never shrinks the keyspace's table, as moving keys does not).
func freedByDeleting(ctx context.Context, cs *conns, tag string) (float64, error) {
	before, err := settledMemory(ctx, cs.primaries, 10*time.Second)
	if err != nil {
		return 0, err
	}
	if err := deleteTagged(ctx, cs, tag); err != nil {
		return 0, err
	}
	after, err := settledMemory(ctx, cs.primaries, 10*time.Second)
	return float64(before - after), err
}

// setEach writes the keys with TTLs, eight at a time.
func setEach(ctx context.Context, st *layout.Store, pairs []zipline.KeyValue, ttls []time.Duration, idx []int) error {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := st.SetEX(ctx, pairs[i].Key, pairs[i].Value, ttls[i]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for _, i := range idx {
		select {
		case work <- i:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

// deleteTagged deletes every key under tag on every primary (SCAN MATCH,
// UNLINK), a bounded number of passes.
func deleteTagged(ctx context.Context, cs *conns, tag string) error {
	for _, c := range cs.primaries {
		for pass := 0; pass < 3; pass++ {
			found := 0
			cursor := "0"
			for i := 0; i < 100_000; i++ {
				v, err := c.Do(ctx, "SCAN", cursor, "MATCH", tag+"*", "COUNT", 1000)
				if err != nil {
					return fmt.Errorf("deleting the calibration keys %s*: %w", tag, err)
				}
				page, _ := v.AsSlice()
				if len(page) != 2 {
					return fmt.Errorf("deleting the calibration keys %s*: malformed SCAN reply", tag)
				}
				cursor, _ = page[0].AsString()
				keys, _ := page[1].AsStrings()
				for _, k := range keys {
					if _, err := c.Do(ctx, "UNLINK", k); err != nil {
						return fmt.Errorf("deleting the calibration keys %s*: %w", tag, err)
					}
					found++
				}
				if cursor == "0" {
					break
				}
			}
			if found == 0 {
				break
			}
		}
	}
	return nil
}
