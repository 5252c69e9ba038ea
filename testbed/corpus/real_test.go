package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"testing"
)

func TestLoadRealJSON(t *testing.T) {
	real := loadReal(t)
	want := map[string]struct {
		n      int
		prefix string // how every value starts: original key order kept
	}{
		"twitter":       {12, `{"metadata":{"result_type":"recent",`},
		"github_events": {30, `{"type":"`},
		"random":        {1000, `{"id":`},
	}
	for name, w := range want {
		values := real[name]
		if len(values) != w.n {
			t.Errorf("%s: %d values, want %d", name, len(values), w.n)
		}
		for i, v := range values {
			if !json.Valid(v) {
				t.Fatalf("%s: value %d is not valid JSON", name, i)
			}
			if !bytes.HasPrefix(v, []byte(w.prefix)) {
				t.Fatalf("%s: value %d starts %.60q, want %q", name, i, v, w.prefix)
			}
			var buf bytes.Buffer
			json.Compact(&buf, v)
			if !bytes.Equal(buf.Bytes(), v) {
				t.Fatalf("%s: value %d is not compact", name, i)
			}
		}
	}
	// Escapes are kept as in the file, not rewritten: the tweets' source
	// field holds HTML with escaped quotes, and json.Marshal would also
	// turn '<' into \u003c.
	if tw := real["twitter"]; len(tw) > 0 && !bytes.Contains(tw[0], []byte(`"source":"<a href=\"http`)) {
		t.Errorf("twitter value 0 does not keep the source field's bytes: %.300s", tw[0])
	}
	if len(real) != len(RealJSONFiles) {
		t.Errorf("LoadRealJSON returned %d sets, want %d", len(real), len(RealJSONFiles))
	}
}

// The samples are embedded, and their name reads the same values as
// RealJSON; random.json's records are the size the
// layouts benchmark's json-random class and the demo's messages assume.
func TestRealJSONEmbedded(t *testing.T) {
	viaDir, err := LoadRealJSON(EmbeddedRealJSON)
	if err != nil {
		t.Fatal(err)
	}
	real := loadReal(t)
	for _, name := range RealJSONFiles {
		if len(viaDir[name]) != len(real[name]) || !bytes.Equal(viaDir[name][0], real[name][0]) {
			t.Errorf("%s: LoadRealJSON(EmbeddedRealJSON) differs from RealJSON()", name)
		}
	}
	n := 0
	for _, v := range real["random"] {
		n += len(v)
	}
	if mean := n / len(real["random"]); mean < 440 || mean > 480 {
		t.Errorf("random: mean %d B, want about 460", mean)
	}
	msgs, err := RealMessages(1024)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if len(m) > 1024 || len(m) < 700 || !json.Valid(m) {
			t.Fatalf("message %d: %d B, valid %v", i, len(m), json.Valid(m))
		}
	}
	if len(msgs) < 400 {
		t.Errorf("%d messages of ~1 KiB, want at least 400 (the demo sends 200, a fanout benchmark more)", len(msgs))
	}
}

func TestLoadRealJSONMissing(t *testing.T) {
	_, err := LoadRealJSON(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadRealJSON(empty dir) error = %v, want one matching fs.ErrNotExist", err)
	}
}
