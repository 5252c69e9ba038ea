package cache_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cache"
)

type User struct {
	ID   int
	Name string
}

// database stands for the source of truth; it counts its queries.
type database struct {
	users   map[int]string
	queries atomic.Int64
}

func (db *database) loadUser(_ context.Context, id int) (User, error) {
	db.queries.Add(1)
	name, ok := db.users[id]
	if !ok {
		return User{}, cache.ErrNotFound // cached for NotFoundTTL
	}
	return User{ID: id, Name: name}, nil // any other error is returned, never cached
}

// exampleAddr is the server the example runs against (started by this
// package's TestMain; an application's own elsewhere).
func exampleAddr() string {
	if addr := os.Getenv("ZIPLINE_EXAMPLE_ADDR"); addr != "" {
		return addr
	}
	return "127.0.0.1:6379"
}

// Cache-aside: the first Fetch loads from the database and stores the
// result; the next ones read it from the server, until Delete (after a
// write to the database) makes the next Fetch load again.
func Example() {
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: exampleAddr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	db := &database{users: map[int]string{1: "Ada"}}

	users := cache.New[User](c, cache.Options{TTL: 10 * time.Minute})
	load := func(ctx context.Context) (User, error) { return db.loadUser(ctx, 1) }
	for range 3 {
		u, err := users.Fetch(ctx, "example:user:1", load)
		fmt.Println(u.Name, err)
	}
	fmt.Println("database queries:", db.queries.Load())

	_, err = users.Fetch(ctx, "example:user:2", func(ctx context.Context) (User, error) { return db.loadUser(ctx, 2) })
	fmt.Println(errors.Is(err, cache.ErrNotFound))

	// After changing user 1 in the database:
	db.users[1] = "Ada Lovelace"
	if err := users.Delete(ctx, "example:user:1"); err != nil {
		fmt.Println(err)
		return
	}
	u, err := users.Fetch(ctx, "example:user:1", load)
	fmt.Println(u.Name, err, "database queries:", db.queries.Load())
	_ = users.Delete(ctx, "example:user:1")
	_ = users.Delete(ctx, "example:user:2")
	// Output:
	// Ada <nil>
	// Ada <nil>
	// Ada <nil>
	// database queries: 1
	// true
	// Ada Lovelace <nil> database queries: 3
}
