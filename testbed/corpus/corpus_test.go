package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// customClasses are targets outside GLIDE's table, to check that the
// generators are not tuned to those nine sizes only.
var customClasses = []Class{
	{Kind: JSON, Target: 300},
	{Kind: JSON, Target: 5000},
	{Kind: HTML, Target: 3000},
	{Kind: Session, Target: 2000},
}

func TestGenerateDeterministic(t *testing.T) {
	for _, c := range Classes() {
		a := Generate(c, 300, 42)
		b := Generate(c, 300, 42)
		for i := range a {
			if !bytes.Equal(a[i], b[i]) {
				t.Fatalf("%s: seed 42 gave different document %d on two runs:\n%s\n%s", c, i, a[i], b[i])
			}
		}
		// A shorter run is a prefix of a longer one.
		for i, d := range Generate(c, 40, 42) {
			if !bytes.Equal(d, a[i]) {
				t.Fatalf("%s: Generate(n=40) document %d differs from Generate(n=300)", c, i)
			}
		}
		// Another seed gives other documents. A small one, such as a menu
		// with two links, may come out the same now and then, as in real
		// data, but not often.
		same := 0
		for i, d := range Generate(c, 300, 43) {
			if bytes.Equal(d, a[i]) {
				same++
			}
		}
		if same > 3 {
			t.Errorf("%s: seeds 42 and 43 gave %d identical documents out of 300", c, same)
		}
	}
}

func TestGenerateClassesDiffer(t *testing.T) {
	// The same seed must not give correlated streams for two classes: the
	// first documents of json-461 and json-1884 must differ in content, not
	// only in length.
	a := Generate(JSON461, 1, 7)[0]
	b := Generate(JSON1884, 1, 7)[0]
	if bytes.HasPrefix(b, a[:40]) {
		t.Errorf("json-461 and json-1884 with seed 7 start alike:\n%s\n%s", a, b)
	}
}

func TestGeneratorAppendNext(t *testing.T) {
	want := Generate(HTML556, 50, 3)
	g := NewGenerator(HTML556, 3)
	buf := []byte("prefix")
	for i := range want {
		n := len(buf)
		buf = g.AppendNext(buf)
		if got := buf[n:]; !bytes.Equal(got, want[i]) {
			t.Fatalf("AppendNext document %d = %q, want %q", i, got, want[i])
		}
	}
	if !bytes.HasPrefix(buf, []byte("prefix")) {
		t.Errorf("AppendNext overwrote dst")
	}
	if g.Class() != HTML556 {
		t.Errorf("Class() = %v, want %v", g.Class(), HTML556)
	}
}

func TestNextDoesNotAlias(t *testing.T) {
	g := NewGenerator(JSON461, 1)
	a := g.Next()
	keep := bytes.Clone(a)
	g.Next()
	if !bytes.Equal(a, keep) {
		t.Errorf("Next's result changed after the following call")
	}
}

func TestMeanSize(t *testing.T) {
	const n = 2000
	for _, c := range append(Classes(), customClasses...) {
		docs := Generate(c, n, 1)
		sum, sumSq := 0.0, 0.0
		sizes := map[int]bool{}
		for _, d := range docs {
			x := float64(len(d))
			sum += x
			sumSq += x * x
			sizes[len(d)] = true
		}
		mean := sum / n
		cv := 0.0
		if v := sumSq/n - mean*mean; v > 0 {
			cv = sqrt(v) / mean
		}
		dev := mean/float64(c.Target) - 1
		t.Logf("%-13s mean %6.0f B (%+.1f%%), coefficient of variation %.2f, %d distinct sizes", c, mean, 100*dev, cv, len(sizes))
		if dev < -0.05 || dev > 0.05 {
			t.Errorf("%s: mean size %.0f B is %+.1f%% off the target %d B (limit ±5%%)", c, mean, 100*dev, c.Target)
		}
		if cv < 0.15 || cv > 0.8 {
			t.Errorf("%s: coefficient of variation of sizes is %.2f, want realistic spread in [0.15, 0.8]", c, cv)
		}
		if len(sizes) < 40 {
			t.Errorf("%s: only %d distinct sizes in %d documents", c, len(sizes), n)
		}
		// Short runs too: goals are stratified, so 100 documents suffice.
		for seed := int64(1); seed <= 10; seed++ {
			total := 0
			for _, d := range Generate(c, 100, seed) {
				total += len(d)
			}
			if dev := float64(total)/100/float64(c.Target) - 1; dev < -0.05 || dev > 0.05 {
				t.Errorf("%s, 100 documents, seed %d: mean size %+.1f%% off the target", c, seed, 100*dev)
			}
		}
	}
}

// sqrt is Newton's method, to keep math out of a test about sizes.
func sqrt(x float64) float64 {
	z := x / 2
	for i := 0; i < 60 && z > 0; i++ {
		z = (z + x/z) / 2
	}
	return z
}

func TestJSONValid(t *testing.T) {
	for _, c := range append(Classes(), customClasses...) {
		if c.Kind == HTML {
			continue
		}
		for i, d := range Generate(c, 1000, 5) {
			if !json.Valid(d) {
				t.Fatalf("%s: document %d is not valid JSON:\n%s", c, i, d)
			}
			if d[0] != '{' {
				t.Fatalf("%s: document %d is not an object: %.40s", c, i, d)
			}
			// Compact output: no whitespace outside strings.
			var buf bytes.Buffer
			json.Compact(&buf, d)
			if !bytes.Equal(buf.Bytes(), d) {
				t.Fatalf("%s: document %d is not compact JSON", c, i)
			}
			if bytes.Contains(d, []byte(`":[]`)) {
				t.Fatalf("%s: document %d has an empty list: %s", c, i, d)
			}
		}
	}
}

// session is the part of a session payload every session has, in
// express-session's format.
type session struct {
	Cookie struct {
		OriginalMaxAge int64     `json:"originalMaxAge"`
		Expires        time.Time `json:"expires"`
		HTTPOnly       bool      `json:"httpOnly"`
		Path           string    `json:"path"`
	} `json:"cookie"`
	CSRFSecret string `json:"csrfSecret"`
	OAuth      *struct {
		AccessToken string `json:"accessToken"`
		IDToken     string `json:"idToken"`
	} `json:"oauth"`
}

func TestSessionFormat(t *testing.T) {
	withTokens := 0
	for _, c := range []Class{Session198, Session480, Session951} {
		for i, d := range Generate(c, 1000, 9) {
			var s session
			if err := json.Unmarshal(d, &s); err != nil {
				t.Fatalf("%s: document %d: %v\n%s", c, i, err, d)
			}
			ck := s.Cookie
			if ck.OriginalMaxAge <= 0 || ck.Expires.IsZero() || !ck.HTTPOnly || ck.Path != "/" {
				t.Fatalf("%s: document %d has a malformed cookie: %+v", c, i, ck)
			}
			if ck.Expires.Year() < 2024 || ck.Expires.Year() > 2026 {
				t.Fatalf("%s: document %d expires in %d", c, i, ck.Expires.Year())
			}
			if raw, err := base64.RawURLEncoding.DecodeString(s.CSRFSecret); err != nil || len(raw) != 18 {
				t.Fatalf("%s: document %d: csrfSecret %q is not 18 bytes of base64url", c, i, s.CSRFSecret)
			}
			if s.OAuth == nil {
				continue
			}
			withTokens++
			parts := strings.Split(s.OAuth.IDToken, ".")
			if len(parts) != 3 {
				t.Fatalf("%s: document %d: idToken has %d parts", c, i, len(parts))
			}
			for _, p := range parts[:2] {
				js, err := base64.RawURLEncoding.DecodeString(p)
				if err != nil || !json.Valid(js) {
					t.Fatalf("%s: document %d: JWT part %q is not base64url JSON", c, i, p)
				}
			}
			if sig, err := base64.RawURLEncoding.DecodeString(parts[2]); err != nil || len(sig) != 64 {
				t.Fatalf("%s: document %d: JWT signature is not 64 bytes", c, i)
			}
		}
	}
	if withTokens == 0 {
		t.Errorf("no session holds OAuth tokens")
	}
}

func TestHTMLWellFormed(t *testing.T) {
	for _, c := range append(Classes(), customClasses...) {
		if c.Kind != HTML {
			continue
		}
		for i, d := range Generate(c, 1000, 11) {
			if err := checkHTML(d); err != nil {
				t.Fatalf("%s: document %d: %v\n%s", c, i, err, d)
			}
		}
	}
}

func TestCheckHTMLRejects(t *testing.T) {
	for _, bad := range []string{
		`<div><span></div>`,
		`<p>open`,
		`</p>`,
		`<a href="x>t</a>`,
		`<p>1 < 2</p>`,
		`<p>fish & chips</p>`,
		`<img src="x"></img>`,
	} {
		if checkHTML([]byte(bad)) == nil {
			t.Errorf("checkHTML(%q) = nil, want an error", bad)
		}
	}
	if err := checkHTML([]byte(`<ul class="a"><li><img src="x" alt="">a &amp; b</li></ul>`)); err != nil {
		t.Errorf("checkHTML rejected a good fragment: %v", err)
	}
}

// voidElements have no end tag.
var voidElements = map[string]bool{"img": true, "br": true, "hr": true, "input": true, "meta": true, "link": true, "source": true, "wbr": true}

// checkHTML checks that a fragment is well-formed enough: every element
// closed in order (void elements never), attribute values double-quoted,
// and no bare '<', '>' or '&' in text.
func checkHTML(d []byte) error {
	var stack []string
	for i := 0; i < len(d); {
		switch d[i] {
		case '>':
			return fmt.Errorf("offset %d: bare '>' in text", i)
		case '&':
			end := bytes.IndexByte(d[i:], ';')
			if end < 2 || end > 8 {
				return fmt.Errorf("offset %d: bare '&' in text", i)
			}
			i += end + 1
			continue
		case '<':
		default:
			i++
			continue
		}
		// A tag: <name attr="v"...> or </name>.
		j := i + 1
		closing := j < len(d) && d[j] == '/'
		if closing {
			j++
		}
		start := j
		for j < len(d) && (d[j] >= 'a' && d[j] <= 'z' || d[j] >= '0' && d[j] <= '9') {
			j++
		}
		name := string(d[start:j])
		if name == "" {
			return fmt.Errorf("offset %d: bare '<' in text", i)
		}
		for j < len(d) && d[j] != '>' {
			switch d[j] {
			case '"':
				end := bytes.IndexByte(d[j+1:], '"')
				if end < 0 {
					return fmt.Errorf("offset %d: unterminated attribute value", j)
				}
				if v := d[j+1 : j+1+end]; bytes.ContainsAny(v, "<>") {
					return fmt.Errorf("offset %d: unescaped '<' or '>' in attribute", j)
				}
				j += end + 2
			case '<':
				return fmt.Errorf("offset %d: '<' inside a tag", j)
			default:
				j++
			}
		}
		if j == len(d) {
			return fmt.Errorf("offset %d: unterminated tag <%s", i, name)
		}
		switch {
		case closing && voidElements[name]:
			return fmt.Errorf("offset %d: end tag for void element %s", i, name)
		case closing:
			if len(stack) == 0 || stack[len(stack)-1] != name {
				return fmt.Errorf("offset %d: </%s> does not close %v", i, name, stack)
			}
			stack = stack[:len(stack)-1]
		case !voidElements[name]:
			stack = append(stack, name)
		}
		i = j + 1
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed elements %v", stack)
	}
	return nil
}

func TestClassByName(t *testing.T) {
	if len(Classes()) != 9 {
		t.Fatalf("Classes() has %d classes, want GLIDE's 9", len(Classes()))
	}
	for _, c := range Classes() {
		got, ok := ClassByName(c.Name)
		if !ok || got != c {
			t.Errorf("ClassByName(%q) = %v, %v", c.Name, got, ok)
		}
		if want := c.Kind.String() + "-"; !strings.HasPrefix(c.Name, want) || c.String() != c.Name {
			t.Errorf("class %v: name %q does not start with %q", c, c.Name, want)
		}
	}
	if _, ok := ClassByName("json-2000"); ok {
		t.Errorf("ClassByName found a class that is not in the table")
	}
	if got := (Class{Kind: HTML, Target: 700}).String(); got != "html-700" {
		t.Errorf("unnamed class String() = %q, want html-700", got)
	}
	if got := Kind(7).String(); got != "Kind(7)" {
		t.Errorf("Kind(7).String() = %q", got)
	}
}

func TestGeneratePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"unknown kind":   func() { NewGenerator(Class{Kind: 9, Target: 100}, 1) },
		"negative count": func() { Generate(JSON98, -1, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// golden pins the output: SHA-256 of Generate(c, 200, 1) concatenated. A
// change in the generators, in math/rand/v2's PCG or in its IntN changes
// the corpus, so benchmark numbers taken before and after would not be
// comparable. If the change is deliberate, update the hashes here and say
// so in the commit.
var golden = map[string]string{
	"json-98":     "66160e2240d37201566ba1bb5d8619332ba41c8377bb3ad3dc3bb5ed51707772",
	"json-461":    "14504e6c939c4a2667414f87ec7ef272b444c884171f5f55124c766d212cafb2",
	"json-1884":   "5cb6b8013b42504e52c4e181e92a5a43b2eb978a25fe39c507c561b0f03a0a4d",
	"html-193":    "4efe1831b53340abb41916d376e4a5666ea1567f395a75924b665f4ceb6f914e",
	"html-556":    "4fbb9ba8b7c5fc39ad9ab3433373fbd87633ab100e535a6d14c52a672520ec01",
	"html-1247":   "75d3a9886d73d0c1b6dab9621d79dfe9ba9dfcbd43bac4f0a6084e87cabecad9",
	"session-198": "0cd43eaeab90c52ea0c035ecb6bbad99e72e99c0f793ff0cc87f0c58f87a5f7c",
	"session-480": "b2812e5972ebcd32f9008f3ce3ff153edf601dd2a1b1fc813960eca90e81e544",
	"session-951": "457ea9cca293c1250abc7d5797413c557a4560290b341358ec4792cca93b1076",
}

func TestGolden(t *testing.T) {
	for _, c := range Classes() {
		h := sha256.New()
		for _, d := range Generate(c, 200, 1) {
			h.Write(d)
		}
		got := hex.EncodeToString(h.Sum(nil))
		if want := golden[c.Name]; got != want {
			t.Errorf("%s: corpus hash %s, want %s", c, got, want)
		}
	}
}
