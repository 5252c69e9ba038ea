package codec_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ziplinekv/zipline/codec"
)

func Example() {
	c, err := codec.New(codec.Zstd) // level 3, min size 64, limit 512 MiB
	if err != nil {
		panic(err)
	}
	value := []byte(`{"user":"ada","tags":[` + strings.Repeat(`"compression",`, 20) + `"glide"]}`)

	stored, compressed := c.Encode(nil, value)
	fmt.Printf("compressed: %v, smaller: %v, header: % x\n", compressed, len(stored) < len(value), stored[:5])

	plain, err := c.Decode(nil, stored)
	fmt.Println(bytes.Equal(plain, value), err)

	// Any Codec reads both backends and passes plain values through.
	plain, _ = c.Decode(nil, []byte("written without compression"))
	fmt.Println(string(plain))

	s := c.Stats()
	fmt.Println(s.Compressed, s.Decompressed)
	// Output:
	// compressed: true, smaller: true, header: 00 01 02 00 01
	// true <nil>
	// written without compression
	// 1 1
}
