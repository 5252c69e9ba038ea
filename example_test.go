package zipline_test

import (
	"context"
	"fmt"

	"github.com/ziplinekv/zipline"
)

// greeting is application code written against zipline.Commands rather
// than *zipline.Client.
func greeting(ctx context.Context, c zipline.Commands, user string) string {
	name, err := c.Get(ctx, "user:"+user+":name")
	if err != nil {
		return "hello, stranger"
	}
	return "hello, " + string(name)
}

// fakeCommands answers Get from a map; any other command would panic, as a
// test that calls something unexpected should.
type fakeCommands struct {
	zipline.Commands
	data map[string]string
}

func (f fakeCommands) Get(_ context.Context, key string) ([]byte, error) {
	v, ok := f.data[key]
	if !ok {
		return nil, zipline.Nil
	}
	return []byte(v), nil
}

// A test passes a fake where the application takes zipline.Commands.
func ExampleCommands() {
	fake := fakeCommands{data: map[string]string{"user:7:name": "Ada"}}
	fmt.Println(greeting(context.Background(), fake, "7"))
	fmt.Println(greeting(context.Background(), fake, "8"))
	// Output:
	// hello, Ada
	// hello, stranger
}
