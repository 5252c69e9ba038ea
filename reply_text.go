package zipline

import (
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Replies that are text in a format of their own: INFO's "field:value"
// lines (INFO, CLUSTER INFO) and CLIENT LIST's "k=v k=v" lines (CLIENT
// INFO, CLIENT LIST).

// infoMap parses INFO's "field:value" lines, skipping section headers.
func infoMap(text string) map[string]string {
	m := make(map[string]string)
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m
}

var decInfo = newDecoder(tsText, func(v resp.Value) (map[string]string, error) {
	text, err := decString.decode(v)
	if err != nil {
		return nil, err
	}
	return infoMap(text), nil
})

// clientFields reads one line of CLIENT LIST or INFO: "k=v k=v ...".
func clientFields(line string) map[string]string {
	m := map[string]string{}
	for f := range strings.FieldsSeq(strings.TrimSpace(line)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

var (
	decClientInfo = newDecoder(tsText, func(v resp.Value) (map[string]string, error) {
		return clientFields(string(v.Bytes())), nil
	})
	decClientList = newDecoder(tsText, func(v resp.Value) ([]map[string]string, error) {
		var out []map[string]string
		for line := range strings.Lines(string(v.Bytes())) {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, clientFields(line))
			}
		}
		return out, nil
	})
)
