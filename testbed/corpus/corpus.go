package corpus

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Kind is the type of document a Class holds.
type Kind int

// The kinds of document, after the three types in GLIDE's benchmark table.
const (
	JSON    Kind = iota // API responses, profiles, orders, events; compact JSON
	HTML                // page fragments: list items, product cards, comments
	Session             // web-framework session payloads; JSON (see package doc)
)

// String returns the kind's name as class names use it: "json", "html" or
// "session".
func (k Kind) String() string {
	switch k {
	case JSON:
		return "json"
	case HTML:
		return "html"
	case Session:
		return "session"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Class is a set of documents of one kind with a target mean size.
// Individual documents vary around the target (see Generator).
type Class struct {
	Kind   Kind
	Target int    // target mean size in bytes
	Name   string // e.g. "json-1884"; String derives one when empty
}

// String returns c.Name, or "kind-target" when Name is empty.
func (c Class) String() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Kind.String() + "-" + strconv.Itoa(c.Target)
}

// The nine classes of GLIDE's published table, with its mean sizes.
// JSON1884 is also the class of the headline memory benchmark
// (10,000 values).
var (
	JSON98     = Class{JSON, 98, "json-98"}
	JSON461    = Class{JSON, 461, "json-461"}
	JSON1884   = Class{JSON, 1884, "json-1884"}
	HTML193    = Class{HTML, 193, "html-193"}
	HTML556    = Class{HTML, 556, "html-556"}
	HTML1247   = Class{HTML, 1247, "html-1247"}
	Session198 = Class{Session, 198, "session-198"}
	Session480 = Class{Session, 480, "session-480"}
	Session951 = Class{Session, 951, "session-951"}
)

// Classes returns the nine GLIDE classes, by kind and then size. The slice
// is new on each call; callers may modify it.
func Classes() []Class {
	return []Class{JSON98, JSON461, JSON1884, HTML193, HTML556, HTML1247, Session198, Session480, Session951}
}

// ClassByName returns the GLIDE class with the given name, such as
// "json-1884", for command-line flags.
func ClassByName(name string) (Class, bool) {
	for _, c := range Classes() {
		if c.Name == name {
			return c, true
		}
	}
	return Class{}, false
}

// sizeSpread holds 32 quantiles, in thousandths of the target, of a
// log-normal distribution with sigma 0.3 and mean 1: about 90% of
// documents fall between 0.58 and 1.56 times the target, with a longer tail
// above than below, as with real payload sizes. The values are constants
// (computed once offline) rather than math.Exp calls, so sizes cannot
// differ across platforms.
var sizeSpread = [32]int{
	502, 579, 626, 662, 693, 721, 747, 771, 794, 816, 838, 860, 881, 903, 925, 947,
	969, 992, 1016, 1041, 1067, 1095, 1124, 1156, 1190, 1229, 1272, 1323, 1385, 1466, 1584, 1828,
}

// A Generator yields the documents of one class one at a time, without
// holding them all. It is not safe for concurrent use; give each goroutine
// its own, with its own seed.
//
// Each document gets its own size goal: the class target times one of
// the sizeSpread quantiles, taken in a shuffled order so that every 32
// documents use each quantile once and the goals of a run average to the
// target even for short runs. The builders add whole fields, items and
// elements while the document is short of its goal, and keep the last one
// only if that ends closer to the goal. What is left over (a document can
// never be smaller than its required fields, about 35 to 170 B depending
// on the shape) is carried into the next goals, so the mean over a run
// tracks the target closely. A target below what the shapes can reach
// gives a larger mean.
type Generator struct {
	class Class
	src   source
	order [len(sizeSpread)]uint8 // quantile order for the current 32 documents
	next  int                    // index into order; len(order) means reshuffle
	carry int                    // bytes produced beyond the goals so far (negative: short)
	buf   []byte
	json  jsonWriter
	html  htmlWriter
}

// NewGenerator returns a Generator for class c. The documents depend only
// on c.Kind, c.Target and seed: the same values give the same bytes on
// every run and platform, and two generators with equal inputs yield
// equal sequences. It panics if c.Kind is unknown.
func NewGenerator(c Class, seed int64) *Generator {
	if c.Kind < JSON || c.Kind > Session {
		panic(fmt.Sprintf("corpus: unknown kind %d", int(c.Kind)))
	}
	// The second PCG word separates the streams of classes that share a
	// seed, so json-98 and html-193 with seed 1 do not share randomness.
	salt := uint64(c.Kind)<<32 | uint64(uint32(c.Target))
	g := &Generator{class: c, next: len(sizeSpread)}
	g.src.r = rand.New(rand.NewPCG(uint64(seed), salt^0x9e3779b97f4a7c15))
	for i := range g.order {
		g.order[i] = uint8(i)
	}
	return g
}

// Class returns the class g generates.
func (g *Generator) Class() Class { return g.class }

// Next returns a new document. The caller owns it.
func (g *Generator) Next() []byte {
	doc := g.build()
	out := make([]byte, len(doc))
	copy(out, doc)
	return out
}

// AppendNext appends a new document to dst and returns the extended slice,
// so a caller can reuse one buffer. The document is dst[len(dst):] of the
// result.
func (g *Generator) AppendNext(dst []byte) []byte { return append(dst, g.build()...) }

// build writes the next document into g's internal buffer and returns it;
// the result is valid until the next call.
func (g *Generator) build() []byte {
	s := &g.src
	if g.next == len(g.order) {
		for i := len(g.order) - 1; i > 0; i-- { // Fisher-Yates
			j := s.intn(i + 1)
			g.order[i], g.order[j] = g.order[j], g.order[i]
		}
		g.next = 0
	}
	goal := g.class.Target * (sizeSpread[g.order[g.next]] + s.between(-20, 20)) / 1000
	g.next++
	// Aim off by what earlier documents overshot, by at most a fifth of
	// the goal, so one unreachable goal does not distort the next document.
	t := max(goal-min(max(g.carry, -goal/5), goal/5), 1)
	s.newNow()
	var doc []byte
	switch g.class.Kind {
	case JSON:
		g.json.reset(g.buf)
		buildJSON(s, &g.json, t)
		doc = g.json.b
	case HTML:
		g.html.reset(g.buf)
		buildHTML(s, &g.html, t)
		doc = g.html.b
	case Session:
		g.json.reset(g.buf)
		buildSession(s, &g.json, t)
		doc = g.json.b
	}
	g.buf = doc[:0]
	lim := max(g.class.Target/2, 16)
	g.carry = min(max(g.carry+len(doc)-goal, -lim), lim)
	return doc
}

// Generate returns n documents of class c made from seed: the first n
// documents of NewGenerator(c, seed), so a longer run extends a shorter
// one. From n = 32 on, the mean size is typically within 2% of c.Target
// (tests require 5%), for the GLIDE classes and for other targets above a
// few hundred bytes. It panics if n < 0 or c.Kind is unknown.
func Generate(c Class, n int, seed int64) [][]byte {
	if n < 0 {
		panic("corpus: negative count")
	}
	g := NewGenerator(c, seed)
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = g.Next()
	}
	return docs
}

// keep reports whether an element that grew a document from before to
// after bytes (each counting the bytes still needed to close it) should
// stay, for a document aiming at target bytes: it stays if the document is
// still within the target, or if it ends nearer the target than without
// it.
func keep(before, after, target int) bool {
	return after <= target || after-target < target-before
}

// writer is what grow needs of the JSON and HTML writers.
type writer interface {
	// add writes one element with fn and keeps it only if keep agrees. It
	// reports whether the element was kept and the document is still
	// short of target.
	add(target int, fn func()) bool
	size() int    // the length if the document were closed now
	written() int // the bytes written so far
}

// grow calls w.add with fn until add reports false or limit elements
// were added. It returns how many were kept.
func grow(w writer, target, limit int, fn func()) int {
	n := 0
	for n < limit && w.size() < target {
		before := w.written()
		more := w.add(target, fn)
		if w.written() > before {
			n++
		}
		if !more {
			break
		}
	}
	return n
}

// A shape is one kind of document, built by a writer W, with the range of
// size goals it can reach naturally.
type shape[W writer] struct {
	min, max int
	build    func(s *source, w W, t int)
}

// pick writes one document of about t bytes, in a shape picked at random
// among those whose range holds t; beyond every range, only the small
// shapes are below t, and small builds it.
func pick[W writer](s *source, w W, t int, shapes []shape[W], small func(*source, W, int)) {
	n := 0
	for _, sh := range shapes {
		if sh.min <= t && t <= sh.max {
			n++
		}
	}
	if n == 0 {
		small(s, w, t)
		return
	}
	k := s.intn(n)
	for _, sh := range shapes {
		if sh.min <= t && t <= sh.max {
			if k == 0 {
				sh.build(s, w, t)
				return
			}
			k--
		}
	}
}
