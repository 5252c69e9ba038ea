package codecref

import (
	"encoding/json"
	"testing"
)

func TestDocs(t *testing.T) {
	docs, err := Docs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"100B": {90, 110}, "2KB": {1900, 2300}, "64KB": {60 << 10, 64 << 10}}
	if len(docs) != len(want) {
		t.Fatalf("%d documents, want %d", len(docs), len(want))
	}
	for _, d := range docs {
		r, ok := want[d.Name]
		if !ok || len(d.Data) < r[0] || len(d.Data) > r[1] || !json.Valid(d.Data) {
			t.Errorf("%s: %d bytes (want %d..%d), valid JSON %v", d.Name, len(d.Data), r[0], r[1], json.Valid(d.Data))
		}
	}
}

// Without the C libraries, everything that needs them says so.
func TestWithoutCLibs(t *testing.T) {
	if Available {
		t.Skip("built with the C libraries")
	}
	if _, err := Setup(nil); err == nil {
		t.Error("Setup succeeded without the C libraries")
	}
}
