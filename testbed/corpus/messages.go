package corpus

import "fmt"

// RealMessages returns real JSON messages of about size bytes for
// broadcast benchmarks and the demo, from the embedded samples: consecutive
// user records of random.json (~460 B each) grouped into JSON arrays until
// a group reaches size. With size 1024 that is two records, ~920 B, a
// typical realtime update, and 500 messages. Consecutive messages share
// field names and shapes but no values, as the updates of one channel do.
func RealMessages(size int) ([][]byte, error) {
	return RealJSONMessages(EmbeddedRealJSON, size)
}

// RealJSONMessages is RealMessages on the samples LoadRealJSON reads from
// dir (EmbeddedRealJSON for the embedded ones).
func RealJSONMessages(dir string, size int) ([][]byte, error) {
	vals, err := LoadRealJSON(dir)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	var msg []byte
	for _, v := range vals["random"] {
		if len(msg) == 0 {
			msg = append(msg, '[')
		} else {
			msg = append(msg, ',')
		}
		msg = append(msg, v...)
		if len(msg)+len(v) > size {
			out = append(out, append(msg, ']'))
			msg = nil
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("corpus: no messages of %d bytes in %s", size, dir)
	}
	return out, nil
}
