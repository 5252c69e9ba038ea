package corpus_test

import (
	"fmt"

	"github.com/ziplinekv/zipline/testbed/corpus"
)

// GLIDE's headline memory benchmark used 10,000 JSON values averaging
// 1,884 B; this makes the synthetic equivalent.
func ExampleGenerate() {
	docs := corpus.Generate(corpus.JSON1884, 10000, 1)
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	fmt.Println(len(docs), "values, mean within 5% of 1884 B:", total/len(docs) > 1789 && total/len(docs) < 1978)
	// Output: 10000 values, mean within 5% of 1884 B: true
}

// A Generator yields documents one at a time, for corpora too large to
// hold in memory.
func ExampleNewGenerator() {
	g := corpus.NewGenerator(corpus.JSON98, 1)
	for range 3 {
		fmt.Printf("%s\n", g.Next())
	}
	// Output:
	// {"token_id":"2b7f937b-69d4-4745-b840-d2b81815dab9","user_id":71073396,"scope":"read","exp":1729772117}
	// {"flag":"new_nav","enabled":true,"rollout":35,"variant":"treatment","updated_at":"2024-11-20T22:02:52Z"}
	// {"id":24720418,"username":"diego.lee68","name":"Diego Lee","plan":"free"}
}

func ExampleClassByName() {
	c, ok := corpus.ClassByName("session-480")
	fmt.Println(c.Kind, c.Target, ok)
	// Output: session 480 true
}
