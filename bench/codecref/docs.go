// Package codecref measures zipline's codec against the C libraries that
// Valkey GLIDE's own compression runs on: libzstd (level 3, through
// ZSTD_compressCCtx and ZSTD_decompressDCtx with contexts reused from call
// to call) and liblz4 (LZ4_compress_default, LZ4_decompress_safe), on the
// same real JSON documents, in one process, in interleaved rounds.
//
// The C side needs cgo and the libraries' headers (apt-get install
// libzstd-dev liblz4-dev) and is linked in only with the build tag clibs;
// without it the package builds, Available is false, and Compare fails
// saying so, so that go vet and go test of the bench module need neither.
//
// The driver is ./cmd/codeccmp (see its doc comment for the commands).
package codecref

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ziplinekv/zipline/testbed/corpus"
)

// Doc is one document the comparison compresses.
type Doc struct {
	Name string // "100B", "2KB", "64KB"
	How  string // where its bytes come from
	Data []byte
}

// Docs returns the three documents, all real JSON from the embedded
// samples (corpus.RealJSON, testbed/corpus/realjson):
//
//   - 100B: no sample record is that small (the smallest are 433 B user
//     records), so it is the "repo" object of the 4th GitHub event
//     (github_events[3]), a JSON object of 101 B as the API sent it;
//   - 2KB: the smallest of the 12 tweets (twitter), one whole record of
//     2,180 B;
//   - 64KB: a JSON array of the 30 GitHub events followed by as many
//     tweets, in order, as keep it within 65,536 B.
func Docs() ([]Doc, error) {
	real, err := corpus.RealJSON()
	if err != nil {
		return nil, err
	}
	events, tweets := real["github_events"], real["twitter"]
	if len(events) < 30 || len(tweets) == 0 {
		return nil, fmt.Errorf("codecref: %d GitHub events and %d tweets, want 30 and some", len(events), len(tweets))
	}

	var ev struct {
		Repo json.RawMessage `json:"repo"`
	}
	if err := json.Unmarshal(events[3], &ev); err != nil {
		return nil, fmt.Errorf("codecref: github_events[3]: %w", err)
	}
	small := bytes.Clone(ev.Repo)

	mid := tweets[0]
	for _, t := range tweets[1:] {
		if len(t) < len(mid) {
			mid = t
		}
	}

	const bigMax = 64 << 10
	big := []byte{'['}
	for _, e := range events {
		big = append(append(big, e...), ',')
	}
	for _, t := range tweets {
		if len(big)+len(t)+1 > bigMax {
			break
		}
		big = append(append(big, t...), ',')
	}
	big[len(big)-1] = ']'
	if !json.Valid(big) || !json.Valid(small) {
		return nil, fmt.Errorf("codecref: a document is not valid JSON")
	}
	return []Doc{
		{"100B", "the \"repo\" object of github_events[3]", small},
		{"2KB", "the smallest tweet (twitter), one whole record", bytes.Clone(mid)},
		{"64KB", "JSON array: the 30 GitHub events, then tweets in order while within 64 KiB", big},
	}, nil
}
