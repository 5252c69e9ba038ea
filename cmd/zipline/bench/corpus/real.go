package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RealJSONFiles names the real JSON samples that LoadRealJSON reads, in a
// fixed order: the key in LoadRealJSON's result, which is also the file name
// without its ".json" extension.
var RealJSONFiles = []string{"twitter", "github_events", "random"}

// FindRealJSON returns the directory of the real JSON samples,
// shared/corpus/json in the shared folder beside the project root (its
// README.md says where the files come from and how each is split). It
// looks from the working directory upwards, so that tests, run in their
// package's directory, and the commands, run anywhere in a checkout, find
// it. If no directory above holds all of RealJSONFiles, the error matches
// fs.ErrNotExist.
func FindRealJSON() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	for {
		p := filepath.Join(dir, "shared", "corpus", "json")
		if hasAll(p) {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("corpus: shared/corpus/json not found above the working directory: %w", fs.ErrNotExist)
		}
		dir = parent
	}
}

// hasAll reports whether dir holds every real sample file.
func hasAll(dir string) bool {
	for _, name := range RealJSONFiles {
		if _, err := os.Stat(filepath.Join(dir, name+".json")); err != nil {
			return false
		}
	}
	return true
}

// LoadRealJSON reads the real JSON samples in dir and splits each file into
// one value per element, the way a cache would store them: twitter.json's
// "statuses" array (one tweet per value), github_events.json's top-level
// array (one event per value) and random.json's "result" array (one user
// record per value). The result maps each name in RealJSONFiles to its
// values.
//
// Each value keeps its original bytes, keys in their original order and
// string escapes untouched; only insignificant whitespace is removed (with
// json.Compact), since a client would store compact JSON. Decoding into
// map[string]any and marshalling again would reorder keys and rewrite
// escapes, which changes how well the values compress.
//
// A missing file is reported with an error that matches fs.ErrNotExist,
// so callers such as tests can skip when the samples are absent.
func LoadRealJSON(dir string) (map[string][][]byte, error) {
	out := make(map[string][][]byte, len(RealJSONFiles))
	for _, name := range RealJSONFiles {
		values, err := loadRealJSONFile(filepath.Join(dir, name+".json"), name)
		if err != nil {
			return nil, err
		}
		out[name] = values
	}
	return out, nil
}

// loadRealJSONFile reads one sample file and returns its elements, compacted.
func loadRealJSONFile(path, name string) ([][]byte, error) {
	data, err := os.ReadFile(path)
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
		return nil, fmt.Errorf("corpus: parsing %s: %w", path, err)
	}
	if len(elems) == 0 {
		return nil, fmt.Errorf("corpus: %s holds no values", path)
	}
	values := make([][]byte, len(elems))
	var buf bytes.Buffer
	for i, e := range elems {
		buf.Reset()
		if err := json.Compact(&buf, e); err != nil {
			return nil, fmt.Errorf("corpus: compacting value %d of %s: %w", i, path, err)
		}
		values[i] = bytes.Clone(buf.Bytes())
	}
	return values, nil
}
