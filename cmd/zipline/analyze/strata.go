package analyze

import (
	"math"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// A pattern's samples, weighted by what the census counted: each stands
// for the keys of its size stratum (stats.go), priced at their mean
// length. A stratum the scan read no sample of borrows its nearest
// neighbour's, scaled to its own length: the sizes are the census's, the
// samples only say how values of about that size compress.

// priced is a sample standing for keys of a stratum.
type priced struct {
	s *sample
	// w is the keyspace's keys it stands for; scale is its stratum's mean
	// length over its own, at which its value is priced (1: as it is).
	w, scale float64
	// stratum is the one it stands for; borrowed when that is not its
	// own.
	stratum  int
	borrowed bool
}

// pricedSamples weighs ss, the samples of p to price, by p's census; with
// no census (keys read before it counted them), each stands for an equal
// share of p's keys.
func (e *evaluator) pricedSamples(p *patternStats, ss []*sample) []priced {
	keys := float64(p.keys) * e.scale
	var censused int64
	for _, b := range p.census {
		censused += b.keys
	}
	if censused == 0 || len(ss) == 0 {
		out := make([]priced, len(ss))
		for i, s := range ss {
			out[i] = priced{s: s, w: keys / float64(len(ss)), scale: 1, stratum: stratum(s.length)}
		}
		return out
	}
	byStratum := map[int][]*sample{}
	for _, s := range ss {
		byStratum[stratum(s.length)] = append(byStratum[stratum(s.length)], s)
	}
	perCensused := keys / float64(censused) // keys the census did not measure share its spread
	var out []priced
	for t, b := range p.census {
		if b.keys == 0 {
			continue
		}
		use, from := byStratum[t], t
		for d := 1; len(use) == 0 && d < numStrata; d++ {
			if t-d >= 0 && len(byStratum[t-d]) > 0 {
				use, from = byStratum[t-d], t-d
			} else if t+d < numStrata && len(byStratum[t+d]) > 0 {
				use, from = byStratum[t+d], t+d
			}
		}
		mean := float64(b.bytes) / float64(b.keys)
		var sampled float64
		for _, s := range use {
			sampled += float64(s.length)
		}
		sampled /= float64(len(use))
		// Small values are priced as they are (an integer's encoding, the
		// allocator's classes); larger ones, and borrowed ones, scaled by
		// one factor that gives them the stratum's mean length, keeping
		// their spread around it.
		scale := 1.0
		if sampled > 0 && (from != t || mean >= 256) {
			scale = mean / sampled
		}
		w := float64(b.keys) * perCensused / float64(len(use))
		for _, s := range use {
			out = append(out, priced{s: s, w: w, scale: scale, stratum: t, borrowed: from != t})
		}
	}
	return out
}

// nowValue is how the value a priced sample stands for is stored now.
func (x priced) nowValue() layout.StoredValue {
	if x.scale == 1 && !x.s.truncated {
		return layout.StoredValueOf(x.s.value)
	}
	return layout.StoredValue{Len: int(math.Round(float64(x.s.length) * x.scale))}
}

// encodeScaled is encode at the sample's scale: the stored and application
// bytes grow with the value; an envelope's 5-byte header does not.
func (e *evaluator) encodeScaled(x priced, c *codec.Codec, backend codec.Backend) encoded {
	enc := e.encode(x.s, c, backend)
	if x.scale == 1 {
		return enc
	}
	n := float64(enc.value.Len)
	header := 0.0
	if enc.value.Len < enc.in { // an envelope: its header does not grow
		header = 5
	}
	out := layout.StoredValue{Len: int(math.Round(header + (n-header)*x.scale))}
	return encoded{value: out, in: int(math.Round(float64(enc.in) * x.scale)), entry: valueEntry(out)}
}

// spread accumulates, per stratum, what each priced sample saves per key,
// for the interval of a prediction: the variance of a stratified estimate
// is the sum over strata of N² × var / n.
type spread struct {
	strata map[int]*stratumSpread
}

type stratumSpread struct {
	n          int
	w          float64 // keys of the stratum (each sample's w times n)
	sum, sumSq float64
	borrowed   bool
}

func (sp *spread) add(x priced, saved float64) {
	if sp.strata == nil {
		sp.strata = map[int]*stratumSpread{}
	}
	st := sp.strata[x.stratum]
	if st == nil {
		st = &stratumSpread{}
		sp.strata[x.stratum] = st
	}
	st.n++
	st.w += x.w
	st.sum += saved
	st.sumSq += saved * saved
	st.borrowed = st.borrowed || x.borrowed
}

// variance is the variance of the saving the samples estimate. A stratum
// of one sample takes the relative spread of the strata with more (or a
// quarter of its mean, with none); a borrowed one counts twice.
func (sp *spread) variance() float64 {
	var cvSum, cvN float64
	for _, st := range sp.strata {
		if st.n >= 2 {
			mean := st.sum / float64(st.n)
			v := (st.sumSq - float64(st.n)*mean*mean) / float64(st.n-1)
			if mean != 0 {
				cvSum += max(v, 0) / (mean * mean)
				cvN++
			}
		}
	}
	cv2 := 1.0 / 16
	if cvN > 0 {
		cv2 = cvSum / cvN
	}
	var total float64
	for _, st := range sp.strata {
		mean := st.sum / float64(st.n)
		v := cv2 * mean * mean
		if st.n >= 2 {
			v = max((st.sumSq-float64(st.n)*mean*mean)/float64(st.n-1), 0)
		}
		if st.borrowed {
			v *= 2
		}
		total += st.w * st.w * v / float64(st.n)
	}
	return total
}
