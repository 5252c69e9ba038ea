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

func ExampleTrainDictionary() {
	// Samples of the values to store: here 1000 small JSON records.
	record := func(i int) []byte {
		return fmt.Appendf(nil, `{"id":%d,"name":"user %d","email":"user%d@example.com","plan":%q,"active":%t}`,
			i, i, i, []string{"free", "pro", "team"}[i%3], i%4 != 0)
	}
	var samples [][]byte
	for i := range 1000 {
		samples = append(samples, record(i))
	}
	dict, err := codec.TrainDictionary(samples, 0)
	if err != nil {
		panic(err)
	}
	// Keep dict with the configuration: values cannot be read without it.
	c, err := codec.New(codec.ZstdDict, codec.WithDictionary(dict))
	if err != nil {
		panic(err)
	}
	value := record(123456)
	stored, _ := c.Encode(nil, value)
	fmt.Printf("header % x, smaller than half: %v\n", stored[:5], 2*len(stored) < len(value))

	plain, err := c.Decode(nil, stored)
	fmt.Println(bytes.Equal(plain, value), err)

	// Without the dictionary, the stored bytes come back as they are.
	other, _ := codec.New(codec.Zstd)
	raw, err := other.Decode(nil, stored)
	fmt.Println(bytes.Equal(raw, stored), err)
	// Output:
	// header 00 01 02 00 81, smaller than half: true
	// true <nil>
	// true <nil>
}
