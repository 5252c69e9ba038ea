package cache_test

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cache"
)

type User struct {
	ID   int
	Name string
}

func loadUser(ctx context.Context, db *sql.DB, id int) (User, error) {
	u := User{ID: id}
	err := db.QueryRowContext(ctx, "SELECT name FROM users WHERE id = $1", id).Scan(&u.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, cache.ErrNotFound // cached for NotFoundTTL
	}
	return u, err // any other error is returned, never cached
}

func Example() {
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: "127.0.0.1:6379"})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var db *sql.DB // the source of truth

	users := cache.New[User](c, cache.Options{TTL: 10 * time.Minute})
	u, err := users.Fetch(ctx, "user:1", func(ctx context.Context) (User, error) {
		return loadUser(ctx, db, 1)
	})
	switch {
	case errors.Is(err, cache.ErrNotFound):
		// no such user
	case err != nil:
		// the database failed, or ctx ended
	default:
		_ = u
	}

	// After changing user 1 in the database:
	_ = users.Delete(ctx, "user:1")
}
