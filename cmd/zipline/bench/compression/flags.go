package compression

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ziplinekv/zipline/testbed/corpus"
)

// ParseInts reads a comma-separated list of positive integers, such as a
// -goroutines flag.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("compression: %q is not a positive integer", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("compression: empty list %q", s)
	}
	return out, nil
}

// ParseClasses reads a comma-separated list of corpus class names, or
// "all" for the nine GLIDE classes.
func ParseClasses(s string) ([]corpus.Class, error) {
	if strings.TrimSpace(s) == "all" {
		return corpus.Classes(), nil
	}
	var out []corpus.Class
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		c, ok := corpus.ClassByName(f)
		if !ok {
			return nil, fmt.Errorf("compression: unknown class %q (want all, or some of json-98,json-461,json-1884,html-193,html-556,html-1247,session-198,session-480,session-951)", f)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("compression: no classes in %q", s)
	}
	return out, nil
}

// CorpusCheck measures how the generated classes and the real JSON samples
// (embedded in package corpus) compress (see Measure), generated first. n
// is the number of generated values per class.
func CorpusCheck(classes []corpus.Class, n int, seed int64) ([]Compressibility, string, error) {
	var out []Compressibility
	for _, c := range classes {
		r, err := Measure(c.String(), corpus.Generate(c, n, seed))
		if err != nil {
			return nil, "", err
		}
		out = append(out, r)
	}
	real, err := corpus.RealJSON()
	if err != nil {
		return out, "", err
	}
	for _, name := range corpus.RealJSONFiles {
		r, err := Measure("real "+name, real[name])
		if err != nil {
			return nil, "", err
		}
		out = append(out, r)
	}
	note := fmt.Sprintf("Generated classes (%d values each, seed %d) beside %s: one value per tweet, "+
		"GitHub event, user record. Generated json-1884 should compress within the real samples' range.", n, seed, corpus.RealJSONSource)
	return out, note, nil
}
