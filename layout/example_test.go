package layout_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
)

// exampleAddr is the server the examples run against (started by this
// package's TestMain; an application's own elsewhere).
func exampleAddr() string {
	if addr := os.Getenv("ZIPLINE_EXAMPLE_ADDR"); addr != "" {
		return addr
	}
	return "127.0.0.1:6379"
}

// A namespace of user records kept 100 to a hash under zipped names: the
// application reads and writes "user:<id>" as before, and the server holds
// one small hash for every hundred ids.
func ExampleNamespace() {
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: exampleAddr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	users, err := layout.New(ctx, c, layout.Namespace{
		Prefix:  "user:",           // the keys the application uses
		ZipAs:   "u:",              // stored under this prefix, ids in base62
		Buckets: layout.Dense(100), // "user:12345" is field 45 of bucket 123
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range []string{"12345", "12346"} {
		if err := users.Set(ctx, "user:"+id, []byte(`{"id":`+id+`}`)); err != nil {
			fmt.Println(err)
			return
		}
	}
	v, err := users.Get(ctx, "user:12346")
	fmt.Println(string(v), err)
	stored, err := c.Keys(ctx, "u:*")
	fmt.Println(stored, err)
	n, err := users.Del(ctx, "user:12345", "user:12346")
	fmt.Println(n, err)
	// Output:
	// {"id":12346} <nil>
	// [u:#1Z] <nil>
	// 2 <nil>
}
