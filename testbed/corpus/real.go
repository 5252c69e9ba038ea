package corpus

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// RealJSONFiles names the real JSON samples that LoadRealJSON reads, in a
// fixed order: the key in LoadRealJSON's result, which is also the file name
// without its ".json" extension.
var RealJSONFiles = []string{"twitter", "github_events", "random"}

// realJSON is the real JSON samples, built into every binary that uses
// this package, so that the CLI finds them from any working directory.
// realjson/README.md says where the files come from and how they were
// trimmed.
//
//go:embed realjson/*.json realjson/README.md
var realJSON embed.FS

// RealJSONSource names the embedded samples in reports.
const RealJSONSource = "the real JSON samples of simdjson/simdjson-data embedded in zipline (testbed/corpus/realjson)"

// EmbeddedRealJSON names the embedded samples as a directory: LoadRealJSON
// and RealJSONMessages read them when given it.
const EmbeddedRealJSON = "embedded:realjson"

// RealJSON returns the embedded real JSON samples, split into values as
// LoadRealJSON describes. Every call returns values of its own, which the
// caller may modify.
func RealJSON() (map[string][][]byte, error) {
	return LoadRealJSON(EmbeddedRealJSON)
}

// LoadRealJSON reads the real JSON samples in dir (EmbeddedRealJSON for the
// ones built into the binary) and splits each file into one value per
// element, the way a cache would store them: twitter.json's "statuses"
// array (one tweet per value), github_events.json's top-level array (one
// event per value) and random.json's "result" array (one user record per
// value). The result maps each name in RealJSONFiles to its values.
//
// Each value keeps its original bytes, keys in their original order and
// string escapes untouched; only insignificant whitespace is removed (with
// json.Compact), since a client would store compact JSON. Decoding into
// map[string]any and marshalling again would reorder keys and rewrite
// escapes, which changes how well the values compress.
//
// A missing file is reported with an error that matches fs.ErrNotExist.
func LoadRealJSON(dir string) (map[string][][]byte, error) {
	fsys, root := fs.FS(realJSON), "realjson"
	if dir != EmbeddedRealJSON {
		fsys, root = os.DirFS(dir), "."
	}
	out := make(map[string][][]byte, len(RealJSONFiles))
	for _, name := range RealJSONFiles {
		values, err := loadRealJSONFile(fsys, path.Join(root, name+".json"), name)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, dir)
		}
		out[name] = values
	}
	return out, nil
}

// realJSONFile returns the bytes of one embedded sample file, name being
// one of RealJSONFiles.
func realJSONFile(name string) ([]byte, error) {
	b, err := realJSON.ReadFile(path.Join("realjson", name+".json"))
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return b, nil
}

// loadRealJSONFile reads one sample file and returns its elements, compacted.
func loadRealJSONFile(fsys fs.FS, file, name string) ([][]byte, error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var elems []json.RawMessage
	switch name {
	case "twitter":
		var doc struct {
			Statuses []json.RawMessage `json:"statuses"`
		}
		err = json.Unmarshal(data, &doc)
		elems = doc.Statuses
	case "random":
		var doc struct {
			Result []json.RawMessage `json:"result"`
		}
		err = json.Unmarshal(data, &doc)
		elems = doc.Result
	default: // github_events: a top-level array.
		err = json.Unmarshal(data, &elems)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus: parsing %s: %w", file, err)
	}
	if len(elems) == 0 {
		return nil, fmt.Errorf("corpus: %s holds no values", file)
	}
	values := make([][]byte, len(elems))
	var buf bytes.Buffer
	for i, e := range elems {
		buf.Reset()
		if err := json.Compact(&buf, e); err != nil {
			return nil, fmt.Errorf("corpus: compacting value %d of %s: %w", i, file, err)
		}
		values[i] = bytes.Clone(buf.Bytes())
	}
	return values, nil
}
